/// A subcommand's arguments and options, from which both parsing and `--help` are made.
struct CommandDefinition: Sendable {
  /// One option.
  struct Option: Sendable {
    /// The option's name with its dashes: `--entity`.
    var name: String
    /// The name of its value in help (`NAME`), or `nil` for a flag without a value.
    var valueName: String?
    /// What it does, one line.
    var help: String
    /// Whether the command needs it.
    var isRequired = false
  }

  /// The subcommand's name.
  var name: String
  /// What it does, one line.
  var abstract: String
  /// The positional arguments (names and help), all required.
  var arguments: [(name: String, help: String)]
  /// The options.
  var options: [Option]
  /// More to say, after the options.
  var discussion: String = ""

  /// The usage line: `objectgraph dump FILE [--entity NAME] ...`.
  var usage: String {
    let parts =
      arguments.map(\.name)
      + options.map { option in
        let text = option.name + (option.valueName.map { " \($0)" } ?? "")
        return option.isRequired ? text : "[\(text)]"
      }
    return (["objectgraph", name] + parts).joined(separator: " ")
  }

  /// The text `--help` prints.
  var help: String {
    var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(usage)\n"
    if !arguments.isEmpty {
      text += "\nARGUMENTS:\n"
      for argument in arguments { text += Self.row(argument.name, argument.help) }
    }
    text += "\nOPTIONS:\n"
    for option in options {
      text += Self.row(
        option.name + (option.valueName.map { " \($0)" } ?? ""), option.help)
    }
    text += Self.row("-h, --help", "Show this help.")
    if !discussion.isEmpty { text += "\n" + discussion + "\n" }
    text += "\n" + Inspector.exitCodeHelp
    return text
  }

  /// One aligned row of a help table.
  static func row(_ name: String, _ help: String, width: Int = 22) -> String {
    let padded =
      name.count < width ? name + String(repeating: " ", count: width - name.count) : name + " "
    return "  " + padded + help + "\n"
  }
}

/// The arguments of one subcommand, parsed.
struct ParsedArguments {
  /// The positional arguments, in order.
  var positionals: [String] = []
  /// The value of each option given (flags map to an empty string).
  var values: [String: String] = [:]
  /// Whether `-h` or `--help` was given.
  var wantsHelp = false

  /// The value of an option, if given.
  subscript(option: String) -> String? { values[option] }

  /// The value of an option that takes a whole number of at least `minimum`.
  ///
  /// - Throws: ``InspectorError/Code/usage`` when the value is not such a number.
  func integer(_ option: String, minimum: Int, command: String) throws(InspectorError) -> Int? {
    guard let text = values[option] else { return nil }
    guard let number = Int(text), number >= minimum else {
      throw ArgumentParser.usageError(
        "\(option) needs a whole number of at least \(minimum), not '\(text)'", command: command)
    }
    return number
  }
}

/// A small, hand-written parser for the inspector's subcommands.
///
/// Accepts positional arguments, `--name value` and `--name=value`, `-h`/`--help` anywhere,
/// and `--` to end the options (so a file may be named `--odd`). Refuses unknown options,
/// repeated options, missing values and missing or extra positional arguments, each with one
/// line that points to the subcommand's `--help`.
enum ArgumentParser {
  /// Parses `arguments` (what follows the subcommand's name) for `command`.
  ///
  /// - Throws: ``InspectorError/Code/usage`` naming the problem. When `-h` or `--help` is
  ///   among the arguments, nothing else is checked.
  static func parse(_ arguments: [String], for command: CommandDefinition) throws(InspectorError)
    -> ParsedArguments
  {
    var parsed = ParsedArguments()
    let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
    if arguments[..<end].contains(where: { $0 == "-h" || $0 == "--help" }) {
      parsed.wantsHelp = true
      return parsed
    }
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
        parsed.positionals.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      guard let option = command.options.first(where: { $0.name == name }) else {
        throw usageError("unknown option '\(name)'", command: command.name)
      }
      guard parsed.values[name] == nil else {
        throw usageError("\(name) is given more than once", command: command.name)
      }
      if option.valueName == nil {
        guard inlineValue == nil else {
          throw usageError("\(name) takes no value", command: command.name)
        }
        parsed.values[name] = ""
      } else if let inlineValue {
        parsed.values[name] = inlineValue
      } else {
        guard index < arguments.count else {
          throw usageError(
            "\(name) needs a value (\(name) \(option.valueName!))", command: command.name)
        }
        parsed.values[name] = arguments[index]
        index += 1
      }
    }
    let expected = command.arguments.map(\.name)
    if parsed.positionals.count < expected.count {
      throw usageError("missing \(expected[parsed.positionals.count])", command: command.name)
    }
    if parsed.positionals.count > expected.count {
      throw usageError(
        "unexpected argument '\(parsed.positionals[expected.count])'", command: command.name)
    }
    for option in command.options where option.isRequired && parsed.values[option.name] == nil {
      throw usageError(
        "missing \(option.name)\(option.valueName.map { " \($0)" } ?? "")", command: command.name)
    }
    return parsed
  }

  /// A usage error that points to the command's help.
  static func usageError(_ message: String, command: String?) -> InspectorError {
    let help = command.map { "objectgraph \($0) --help" } ?? "objectgraph --help"
    return InspectorError(.usage, "\(message) (see '\(help)')")
  }
}
