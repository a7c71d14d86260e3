import Clocks
import Foundation
import HTTPRouting
import Settings
import UnifiedCache

/// The raw cache API (CONTRACT §4): PUT/GET/HEAD/DELETE of one key, list and delete by prefix, clear all.
struct RawCacheRoutes: Sendable {
    let auth: AdminAuth
    let cache: UnifiedCacheManager
    let clock: any WallClock

    static let defaultTTL: Duration = .seconds(24 * 3600)
    /// Longer TTLs are cut to 100 years, so that expiry dates stay ordinary RFC 3339 timestamps.
    static let maximumTTL: Duration = .seconds(100 * 365 * 24 * 3600)

    func register(in router: inout Router) {
        auth.register(
            [
                (.put, "/v1/cache/{key}", put), (.get, "/v1/cache/{key}", get), (.delete, "/v1/cache/{key}", delete),
                (.get, "/v1/cache", list), (.delete, "/v1/cache", deleteMany),
            ], in: &router)
    }

    func put(_ request: Request) async throws(Problem) -> Response {
        let key = try Self.key(request)
        try Self.refuseOwned(key)
        try Self.refuseContentCoding(request)
        let ttl = try Self.ttl(request)
        let contentType = try Self.mediaType(request)
        let created: Bool
        let entry: CacheEntry
        do {
            (created, entry) = try await cache.put(key: key, body: request.body, contentType: contentType, ttl: ttl)
        } catch {
            switch error {
            case .notStored(let reason, let leftover):
                throw Problem.insufficientStorage(detail: Self.notWritten(reason, leftover: leftover))
            case .largerThanMemory(let cost, let limitBytes):
                throw Problem.insufficientStorage(
                    detail: "Not stored: with the disk tier off, memory is this instance's only tier, and the entry "
                        + "takes \(cost) bytes there, more than its whole budget of \(limitBytes) bytes. Nothing "
                        + "changed under this key; raise --memory-limit, or give the disk tier a budget (--disk-limit).")
            case .sharedTierUnavailable(let unavailable):
                throw FleetProblem.problem(unavailable, outcome: "Nothing is stored under this key")
            }
        }
        var response = Response.json(
            #"{"key":"\#(key)","bytes":\#(entry.body.count),"expiresAt":"\#(HTTPDates.iso8601(entry.expiresAt))"}"#,
            status: created ? 201 : 200)
        response.headers.add(name: "ETag", value: entry.etag)
        return response
    }

    /// The 507's detail: what is kept under the key now (nothing, or what a tier could not remove after the refusal).
    static func notWritten(_ reason: String, leftover: InvalidationIncomplete?) -> String {
        let refused = "Not stored: the disk tier could not write the entry (\(reason))."
        switch leftover {
        case nil:
            return "\(refused) Nothing is kept under this key; retry once the disk has room (a value larger than "
                + "the disk tier's whole budget never fits: raise --disk-limit)."
        case .secondTier(let undeleted, let shared):
            let fleet = shared.map { " Nor could the shared tier (Redis) be told to drop the new value (\($0.reason))."
            }
            return "\(refused) Nor could it delete the previous value's file (\(undeleted)): this instance no longer "
                + "serves it, but a restart would find it.\(fleet ?? "") Retry the PUT, or DELETE the key, once the "
                + "data dir is writable."
        case .shared(let unavailable):
            return "\(refused) This instance keeps nothing under this key, but the shared tier (Redis) could not be "
                + "told to drop the new value (\(unavailable.reason)): other instances may serve it. Retry once the "
                + "disk has room."
        }
    }

    /// GET and HEAD (the server drops the body of a HEAD answer).
    func get(_ request: Request) async throws(Problem) -> Response {
        let key = try Self.key(request)
        guard let entry = await cache.peek(key) else { throw Self.notStored(key) }
        let now = clock.now()
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: entry.contentType)
        headers.add(name: "ETag", value: entry.etag)
        headers.add(name: "Age", value: String(entry.age(at: now)))
        headers.add(name: "Expires", value: HTTPDates.httpDate(entry.expiresAt))
        if let condition = request.headers["If-None-Match"], CacheHeaders.etagMatches(condition, entry.etag) {
            return CacheHeaders.notModified(headers)
        }
        return Response(status: 200, headers: headers, body: entry.body)
    }

    /// 204 when a fresh value was stored under the key (what `GET` would have answered), else 404; either way every
    /// copy is removed, an expired one included.
    func delete(_ request: Request) async throws(Problem) -> Response {
        let key = try Self.key(request)
        // 204 for what is in effect: a fresh value, or a remembered "not found" (listed, and counted by a prefix
        // delete); an expired copy is removed too, but was absent already.
        let held = await cache.holds(key)
        let removed = try await FleetProblem.map { () throws(InvalidationIncomplete) in try await cache.remove(key) }
        guard removed, held else { throw Self.notStored(key) }
        return Response(status: 204)
    }

    func list(_ request: Request) async throws(Problem) -> Response {
        let prefix = try Self.prefix(request) ?? ""
        let limit = try Self.input { () throws(InputError) in
            try InputValidation.integer(
                InputValidation.single("limit", of: request.query), name: "limit", range: 1...100_000, default: 1000)
        }
        let rows = await cache.list(prefix: prefix, limit: limit).map { row in
            #"{"key":"\#(row.key)","namespace":"\#(row.namespace)","bytes":\#(row.bytes),"tier":"\#(row.tier.rawValue)","storedAt":"\#(HTTPDates.iso8601(row.storedAt))","expiresAt":"\#(HTTPDates.iso8601(row.expiresAt))"}"#
        }
        return .json(#"{"entries":[\#(rows.joined(separator: ","))]}"#)
    }

    func deleteMany(_ request: Request) async throws(Problem) -> Response {
        let all = try Self.input { () throws(InputError) in
            try InputValidation.boolean(InputValidation.single("all", of: request.query), name: "all")
        }
        if all {
            let count = try await FleetProblem.map { () throws(InvalidationIncomplete) in try await cache.removeAll() }
            return .json(#"{"invalidated":\#(count)}"#)
        }
        guard let prefix = try Self.prefix(request), !prefix.isEmpty else {
            throw Problem.badRequest(
                detail: "Name what to invalidate: ?prefix=P, or ?all=true to clear everything.",
                type: Problem.typeURI("invalid-parameter"))
        }
        let count = try await FleetProblem.map { () throws(InvalidationIncomplete) in
            try await cache.invalidate(prefix: prefix)
        }
        return .json(#"{"invalidated":\#(count)}"#)
    }

    static func key(_ request: Request) throws(Problem) -> String {
        try input { () throws(InputError) in try InputValidation.key(request.pathParameters["key"] ?? "") }
    }

    /// A key a read-through route owns (its namespace's prefix and a user, CONTRACT §14.3) is not the raw API's to
    /// write: a raw value there would be served as that user's data. Reading and deleting it stay allowed.
    static func refuseOwned(_ key: String) throws(Problem) {
        guard ResourceTable.userKeys.user(in: key) != nil else { return }
        throw Problem(
            type: Problem.typeURI("key-owned"), status: 409,
            detail: "A read-through route owns this key (a read-through prefix followed by a user): only the route "
                + "stores there, so that no raw value is served as a user's data. Choose a key that does not start "
                + "with \(ResourceTable.userKeys.prefixes.joined(separator: ", ")) followed by a user.")
    }

    /// A body in a content coding (`Content-Encoding: gzip`) would be stored and served back without it, so a reader
    /// would take gzip bytes for the media type: 415 with `Accept-Encoding: identity` (RFC 9110 section 15.5.16).
    /// Compressed bytes are stored as a media type of their own (`Content-Type: application/gzip`).
    static func refuseContentCoding(_ request: Request) throws(Problem) {
        guard ContentCoding.isEncoded(request.headers.values(for: "Content-Encoding")) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Accept-Encoding", value: "identity")
        throw Problem(
            type: Problem.typeURI("unsupported-content-coding"), status: 415,
            detail: "The raw cache stores a body as it is and serves it back without a Content-Encoding: send it "
                + "unencoded, or store compressed bytes under their own media type (Content-Type: application/gzip).",
            headers: headers)
    }

    /// The body's `Content-Type`, served back with it: `application/octet-stream` when absent or empty (an empty one
    /// says nothing), else a media type (`text/plain; charset=utf-8`); `not a type` was stored and served back.
    static func mediaType(_ request: Request) throws(Problem) -> String {
        guard let value = request.headers["Content-Type"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty
        else { return "application/octet-stream" }
        guard MediaType.isValid(value) else {
            throw Problem.invalidInput(
                InputError(parameter: "Content-Type", expected: "a media type type/subtype, such as application/json"))
        }
        return value
    }

    /// `?prefix=`: empty, or the characters of a key.
    static func prefix(_ request: Request) throws(Problem) -> String? {
        let given = try input { () throws(InputError) in try InputValidation.single("prefix", of: request.query) }
        guard let prefix = given else { return nil }
        if prefix.isEmpty { return prefix }
        return try input { () throws(InputError) in
            do { return try InputValidation.key(prefix) } catch {
                throw InputError(parameter: "prefix", expected: "up to 512 characters of A–Z a–z 0–9 . _ : , @ -")
            }
        }
    }

    /// `?ttl=DURATION` wins over `Cache-Control: max-age=N`; the default is 24 h. Either is held to `maximumTTL`, and
    /// either, too large to hold, is that longest TTL (RFC 9111 delta-seconds). `max-age`'s quoted form
    /// (`max-age="60"`) is read as its token form, as RFC 9111 section 5.2 asks of recipients.
    static func ttl(_ request: Request) throws(Problem) -> Duration {
        if let text = try input({ () throws(InputError) in try InputValidation.single("ttl", of: request.query) }) {
            // As `max-age`'s: a number too large to hold is the longest TTL, not an error.
            guard let duration = ValueSyntax.duration(text, saturating: true), duration > .zero else {
                throw Problem.invalidInput(InputError(parameter: "ttl", expected: "a positive duration such as 90s, 10m, 24h or 30d"))
            }
            return min(maximumTTL, duration)
        }
        for value in request.headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, parts[0].lowercased() == "max-age" else { continue }
                guard let seconds = ValueSyntax.deltaSeconds(Self.unquoted(parts[1])), seconds > 0 else {
                    throw Problem.invalidInput(InputError(parameter: "Cache-Control max-age", expected: "a positive whole number of seconds"))
                }
                return min(maximumTTL, .seconds(seconds))
            }
        }
        return defaultTTL
    }

    /// A directive's argument without the quotes of its quoted-string form (`"60"` → `60`).
    static func unquoted(_ argument: String) -> Substring {
        let quote = UInt8(ascii: "\"")
        guard argument.utf8.count >= 2, argument.utf8.first == quote, argument.utf8.last == quote else {
            return argument[...]
        }
        return argument.dropFirst().dropLast()
    }

    static func notStored(_ key: String) -> Problem {
        Problem.notFound(detail: "No fresh entry is stored under this key.", type: Problem.typeURI("not-stored"))
    }

    static func input<T>(_ body: () throws(InputError) -> T) throws(Problem) -> T {
        do { return try body() } catch { throw Problem.invalidInput(error) }
    }
}
