/// Keeps an observation alive: dropping the token (or calling ``cancel()``) stops delivery.
///
/// ```swift
/// var token: ObservationToken? = context.observeChanges { print($0.inserted) }
/// token = nil   // no more deliveries
/// ```
public final class ObservationToken {
  private var onCancel: (() -> Void)?

  init(onCancel: @escaping () -> Void) {
    self.onCancel = onCancel
  }

  /// Stops delivery. Idempotent.
  public func cancel() {
    let action = onCancel
    onCancel = nil
    action?()
  }

  deinit {
    cancel()
  }
}
