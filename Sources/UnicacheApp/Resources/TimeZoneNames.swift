import Foundation
import OpenAPISpec

/// The names `?tz=` takes: the `TimeZoneName` list of the service's own openapi.yaml (every zone and link of the IANA
/// time zone database, `Asia/Kolkata` and `Asia/Calcutta` alike), so that the spec and the service cannot disagree.
/// ICU's own list (`TimeZone.knownTimeZoneIdentifiers`) keeps CLDR's names only and would refuse `Asia/Kolkata`;
/// ICU resolves every listed name (a test checks).
enum TimeZoneNames {
    static let accepted: Set<String> = Set(listed(in: OpenAPIDocument.yaml))

    /// The items of the `enum:` under `TimeZoneName:` in `yaml`, in order.
    static func listed(in yaml: String) -> [String] {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard let schema = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "TimeZoneName:" }),
            let list = lines[schema...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "enum:" })
        else { return [] }
        var names: [String] = []
        for line in lines[(list + 1)...] {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("- ") else { break }
            names.append(String(text.dropFirst(2)))
        }
        return names
    }
}
