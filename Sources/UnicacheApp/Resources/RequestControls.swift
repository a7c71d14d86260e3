import Foundation
import HTTPRouting
import UnifiedCache

/// `?refresh=true`, `Cache-Control: no-cache` and `Cache-Control: only-if-cached` (CONTRACT §3, request controls).
enum RequestControls {
    static func control(for request: Request) throws(InputError) -> RequestControl {
        var onlyIfCached = false
        var noCache = false
        for value in request.headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let name = directive.split(separator: "=", maxSplits: 1).first?
                    .trimmingCharacters(in: .whitespaces).lowercased()
                if name == "only-if-cached" { onlyIfCached = true }
                if name == "no-cache" { noCache = true }
            }
        }
        if onlyIfCached { return .onlyIfCached }
        let refresh = try InputValidation.boolean(InputValidation.single("refresh", of: request.query), name: "refresh")
        return noCache || refresh ? .refresh : .normal
    }
}
