#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A buffered text stream to a file descriptor: what the `objectgraph` executable hands the
/// commands for standard output and standard error.
///
/// Text is collected in a buffer of `bufferSize` bytes and written with `write(2)` when the
/// buffer fills and on ``flush()``, so a dump of a million objects costs few system calls and
/// holds at most one buffer of output. Call ``flush()`` before the process exits.
public struct FileOutputStream: TextOutputStream {
  private let descriptor: Int32
  private let bufferSize: Int
  private var buffer: [UInt8] = []

  /// Standard output, buffered by 64 KiB.
  public static var standardOutput: FileOutputStream {
    FileOutputStream(descriptor: 1, bufferSize: 1 << 16)
  }

  /// Standard error, written at once.
  public static var standardError: FileOutputStream {
    FileOutputStream(descriptor: 2, bufferSize: 0)
  }

  /// Creates a stream to an open file descriptor.
  ///
  /// - Parameters:
  ///   - descriptor: The file descriptor; the stream never closes it.
  ///   - bufferSize: The bytes to collect before writing; 0 writes every string at once.
  public init(descriptor: Int32, bufferSize: Int) {
    self.descriptor = descriptor
    self.bufferSize = bufferSize
    buffer.reserveCapacity(bufferSize)
  }

  /// Appends `string`, writing the buffer out when it is full.
  public mutating func write(_ string: String) {
    buffer.append(contentsOf: string.utf8)
    if buffer.count >= bufferSize { flush() }
  }

  /// Writes out what the buffer holds. Write errors (a closed pipe) drop the output.
  public mutating func flush() {
    var written = 0
    buffer.withUnsafeBytes { bytes in
      while written < bytes.count {
        let result = systemWrite(descriptor, bytes.baseAddress! + written, bytes.count - written)
        if result < 0 {
          if errno == EINTR { continue }
          return
        }
        written += result
      }
    }
    buffer.removeAll(keepingCapacity: true)
  }
}

#if canImport(Glibc)
  private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    Glibc.write(descriptor, bytes, count)
  }
#elseif canImport(Darwin)
  private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    Darwin.write(descriptor, bytes, count)
  }
#endif
