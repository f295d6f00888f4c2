import ObjectGraphInspector

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The `objectgraph` tool; everything but the process's streams lives in ObjectGraphInspector.
var output = FileOutputStream.standardOutput
var errorOutput = FileOutputStream.standardError
let status = Inspector.run(
  arguments: Array(CommandLine.arguments.dropFirst()), output: &output, errorOutput: &errorOutput)
output.flush()
errorOutput.flush()
exit(status)
