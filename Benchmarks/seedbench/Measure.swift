import BenchmarkSupport
import Foundation

/// Runs `body` and returns its result with the seconds it took.
@inline(__always)
func timed<Result>(_ body: () throws -> Result) rethrows -> (Result, seconds: Double) {
  let start = monotonicSeconds()
  let result = try body()
  return (result, monotonicSeconds() - start)
}
