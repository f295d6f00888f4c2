import ObjectGraph

/// The code of the `ObjectGraphError` that `body` throws, or `nil` if it throws none.
public func errorCode(_ body: () throws -> Void) -> ObjectGraphError.Code? {
  do {
    try body()
    return nil
  } catch let error as ObjectGraphError {
    return error.code
  } catch {
    return nil
  }
}
