import Settings
import UnicacheApp

/// The one-line message of the configuration error that `arguments` and `environment` make; "" when they make none.
func configurationError(_ arguments: [String], _ environment: [String: String] = [:]) -> String {
    do {
        _ = try UnicacheConfiguration.parse(arguments: arguments, environment: environment)
        return ""
    } catch {
        return error.message
    }
}
