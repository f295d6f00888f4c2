/// The `objectgraph` command-line tool: shows a store file made by `BinaryStore` as a person
/// wants to read it, without the app's model classes (the file records its own schema),
/// verifies it and compacts it.
///
/// ```swift
/// var output = ""
/// var errors = ""
/// let status = Inspector.run(
///   arguments: ["tree", "demo.ogstore", "--entity", "Box", "--children", "children"],
///   output: &output, errorOutput: &errors)
/// ```
///
/// Each subcommand is also a type (``InfoCommand``, ``DumpCommand``, ``TreeCommand``,
/// ``VerifyCommand``, ``CompactCommand``) that writes to the streams it is given and returns
/// the exit status; failures are one line on the error stream, with the status of
/// ``InspectorError/Code``.
public enum Inspector {
  /// Runs the tool with `arguments` (without the program's name).
  ///
  /// - Parameters:
  ///   - arguments: The subcommand and its arguments: `["info", "demo.ogstore"]`.
  ///   - output: Where the subcommand's output goes (standard output).
  ///   - errorOutput: Where errors and warnings go, one line each (standard error).
  /// - Returns: The exit status: 0 on success, otherwise an ``InspectorError/Code``'s.
  public static func run(
    arguments: [String], output: inout some TextOutputStream,
    errorOutput: inout some TextOutputStream
  ) -> Int32 {
    guard let name = arguments.first else {
      return report(
        ArgumentParser.usageError("missing subcommand", command: nil), to: &errorOutput)
    }
    let rest = Array(arguments.dropFirst())
    switch name {
    case "-h", "--help":
      output.write(help)
      return 0
    case "help":
      guard let topic = rest.first else {
        output.write(help)
        return 0
      }
      guard let definition = definitions.first(where: { $0.name == topic }) else {
        return report(
          ArgumentParser.usageError("unknown subcommand '\(topic)'", command: nil),
          to: &errorOutput)
      }
      output.write(definition.help)
      return 0
    case InfoCommand.definition.name:
      return run(InfoCommand.self, rest, &output, &errorOutput)
    case DumpCommand.definition.name:
      return run(DumpCommand.self, rest, &output, &errorOutput)
    case TreeCommand.definition.name:
      return run(TreeCommand.self, rest, &output, &errorOutput)
    case VerifyCommand.definition.name:
      return run(VerifyCommand.self, rest, &output, &errorOutput)
    case CompactCommand.definition.name:
      return run(CompactCommand.self, rest, &output, &errorOutput)
    default:
      return report(
        ArgumentParser.usageError("unknown subcommand '\(name)'", command: nil), to: &errorOutput)
    }
  }

  /// The text `objectgraph --help` prints.
  public static var help: String {
    var text = """
      OVERVIEW: Shows an ObjectGraph store file as a person wants to read it, without the
      app's model classes (the file records its own schema); verifies and compacts it.

      USAGE: objectgraph <subcommand> FILE [options]

      SUBCOMMANDS:

      """
    for definition in definitions {
      text += CommandDefinition.row(definition.name, definition.abstract, width: 10)
    }
    text += """

        See 'objectgraph help <subcommand>' or 'objectgraph <subcommand> --help'.

      \(lockingHelp)

      \(exitCodeHelp)
      """
    return text
  }

  /// How the tool locks and what it never does, for the help texts.
  static let lockingHelp = """
    FILES: info, dump, tree and verify open the file read-only and take a shared lock on it:
    they refuse a store an app has open (exit 4), an app opening the store meanwhile is told
    it is in use, and they never change the file (a torn tail, what a crash during a save
    leaves, is reported, not cut off). compact takes the store's exclusive lock, like an app.
    """

  /// The exit status table, for the help texts.
  static let exitCodeHelp = """
    EXIT STATUS:
      0  success
      1  other failure (the file cannot be read or written)
      2  usage: bad arguments, or an entity or property the file does not have
      3  no such file
      4  the store is in use: an app has it open
      5  damaged: not a store file, or a checksum, record or graph problem
      6  written by a newer format version
      7  verify: the file ends in a save a crash interrupted (the app cuts it off on open)

    """

  /// Every subcommand, in the order of the help.
  static let definitions = [
    InfoCommand.definition, DumpCommand.definition, TreeCommand.definition,
    VerifyCommand.definition, CompactCommand.definition,
  ]

  /// Parses and runs one subcommand.
  private static func run<Command: InspectorCommand>(
    _ type: Command.Type, _ arguments: [String], _ output: inout some TextOutputStream,
    _ errorOutput: inout some TextOutputStream
  ) -> Int32 {
    let command: Command
    do {
      let parsed = try ArgumentParser.parse(arguments, for: Command.definition)
      if parsed.wantsHelp {
        output.write(Command.definition.help)
        return 0
      }
      command = try Command(parsing: parsed)
    } catch {
      return report(error, to: &errorOutput)
    }
    return command.run(output: &output, errorOutput: &errorOutput)
  }

  /// Writes the error's one line and returns its exit status.
  static func report(_ error: InspectorError, to errorOutput: inout some TextOutputStream)
    -> Int32
  {
    let line = error.message.split(whereSeparator: \.isNewline).joined(separator: " ")
    errorOutput.write("objectgraph: error: \(line)\n")
    return error.code.rawValue
  }
}

/// A subcommand's work, run against streams.
public protocol InspectorSubcommand {
  /// Does the command's work, writing its output (and warnings) to the streams.
  ///
  /// - Throws: ``InspectorError`` saying what went wrong.
  func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError)
}

extension InspectorSubcommand {
  /// Runs the command.
  ///
  /// - Returns: The exit status: 0, or an ``InspectorError/Code``'s after writing one line
  ///   to `errorOutput`.
  public func run(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) -> Int32 {
    do {
      try execute(output: &output, errorOutput: &errorOutput)
      return 0
    } catch {
      return Inspector.report(error, to: &errorOutput)
    }
  }
}

/// A subcommand as the tool parses it.
protocol InspectorCommand: InspectorSubcommand {
  /// The subcommand's name, arguments, options and help.
  static var definition: CommandDefinition { get }
  /// Creates the command from parsed arguments.
  ///
  /// - Throws: ``InspectorError/Code/usage`` for a bad option value.
  init(parsing arguments: ParsedArguments) throws(InspectorError)
}

/// A subcommand whose only argument is the store file's path.
protocol PathOnlyCommand: InspectorCommand {
  init(path: String)
}

extension PathOnlyCommand {
  init(parsing arguments: ParsedArguments) throws(InspectorError) {
    self.init(path: arguments.positionals[0])
  }
}
