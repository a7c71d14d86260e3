/// The command line as ArgumentParser is given it. A flag's value that starts with `-` and a digit (`--port -1`,
/// `--refresh-interval -1s`) is joined to its flag (`--port=-1`): ArgumentParser would take it for a flag of its
/// own and answer "Missing value", where the value is refused with the flag's accepted form. No flag or option of
/// unicache is spelled `-` and a digit, and `--` ends the flags as usual.
public enum CommandLineArguments {
    public static func prepared(_ arguments: [String]) -> [String] {
        var prepared: [String] = []
        var flagsEnded = false
        for argument in arguments {
            flagsEnded = flagsEnded || prepared.last == "--"
            if !flagsEnded, let flag = prepared.last, flag.hasPrefix("--"), flag.count > 2, !flag.contains("="),
                argument.hasPrefix("-"), argument.dropFirst().first?.isNumber == true
            {
                prepared[prepared.count - 1] = flag + "=" + argument
            } else {
                prepared.append(argument)
            }
        }
        return prepared
    }
}
