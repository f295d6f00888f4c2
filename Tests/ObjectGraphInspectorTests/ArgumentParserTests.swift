import Testing

@testable import ObjectGraphInspector

@Suite struct ArgumentParserTests {
  @Test func everySubcommandHasHelp() {
    for name in ["info", "dump", "tree", "verify", "compact"] {
      for run in [inspect(name, "--help"), inspect(name, "-h"), inspect("help", name)] {
        #expect(run.status == 0)
        #expect(run.output.contains("USAGE: objectgraph \(name) FILE"))
        #expect(run.output.contains("EXIT STATUS:"))
        #expect(run.errors.isEmpty)
      }
    }
    let main = inspect("--help")
    #expect(main.status == 0)
    for name in ["info", "dump", "tree", "verify", "compact"] {
      #expect(main.output.contains("\n  \(name) "))
    }
    #expect(main.output.contains("4  the store is in use"))
  }

  @Test func badArgumentsAreOneUsageLine() {
    let cases: [([String], String)] = [
      ([], "missing subcommand"),
      (["show", "x"], "unknown subcommand 'show'"),
      (["info"], "missing FILE"),
      (["info", "a", "b"], "unexpected argument 'b'"),
      (["info", "a", "--entity", "Box"], "unknown option '--entity'"),
      (["dump", "a", "--limit"], "--limit needs a value"),
      (["dump", "a", "--limit", "-1"], "--limit needs a whole number of at least 0, not '-1'"),
      (["dump", "a", "--format", "xml"], "--format must be text or json"),
      (["dump", "a", "--entity", "A", "--entity", "B"], "--entity is given more than once"),
      (["tree", "a", "--children", "c"], "missing --entity NAME"),
      (["tree", "a", "--entity", "E", "--children", "c", "--depth", "0"], "--depth needs"),
    ]
    for (arguments, message) in cases {
      var output = ""
      var errors = ""
      let status = Inspector.run(arguments: arguments, output: &output, errorOutput: &errors)
      #expect(status == InspectorError.Code.usage.rawValue, "\(arguments)")
      #expect(errors.split(separator: "\n").count == 1, "\(arguments)")
      #expect(errors.hasPrefix("objectgraph: error: \(message)"), "\(errors)")
      #expect(output.isEmpty)
    }
  }

  @Test func optionsTakeInlineValuesAndDoubleDashEndsThem() throws {
    let definition = DumpCommand.definition
    let parsed = try ArgumentParser.parse(["--limit=3", "--", "--file"], for: definition)
    #expect(parsed.positionals == ["--file"])
    #expect(parsed["--limit"] == "3")
    #expect(try parsed.integer("--limit", minimum: 0, command: "dump") == 3)
    let literal = try ArgumentParser.parse(["--", "--help"], for: definition)
    #expect(!literal.wantsHelp && literal.positionals == ["--help"])
  }
}
