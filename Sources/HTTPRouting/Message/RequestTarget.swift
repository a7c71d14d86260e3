/// The decoded parts of a raw request target (`/a/b%2Fc?x=1`).
struct RequestTarget {
    var segments: [String]
    var query: QueryParameters

    init(parsing target: String) throws(Problem) {
        var target = target
        self = try target.withUTF8 { utf8 in Result { () throws(Problem) in try RequestTarget(utf8: utf8) } }.get()
    }

    private init(utf8 whole: UnsafeBufferPointer<UInt8>) throws(Problem) {
        // A fragment is the client's own (RFC 9112 section 3.2: a request target has none): `/healthz#x` was a
        // path segment `healthz#x` (404) and `?days=3#x` a bad `days` (400); both are one 400 now.
        if whole.contains(UInt8(ascii: "#")) {
            throw Problem.badRequest(
                detail: "The request target has a fragment (#...): send the path and query without it.")
        }
        var bytes = whole[...]
        // absolute-form (`http://host/path`): keep only the path.
        if bytes.first != UInt8(ascii: "/"), let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
           bytes[colon...].dropFirst().starts(with: "//".utf8) {
            let authority = bytes[(colon + 3)...]
            bytes = bytes[(authority.firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex)...]
        }
        var path = bytes
        var queryPart: Slice<UnsafeBufferPointer<UInt8>>?
        if let question = bytes.firstIndex(of: UInt8(ascii: "?")) {
            path = bytes[bytes.startIndex..<question]
            queryPart = bytes[(question + 1)...]
        }
        if path.first == UInt8(ascii: "/") { path = path.dropFirst() }
        var segments: [String] = []
        if !path.isEmpty {
            segments.reserveCapacity(8)
            var start = path.startIndex
            do {
                while true {
                    let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
                    segments.append(try PercentDecoding.decode(path[start..<end], plusAsSpace: false))
                    guard end < path.endIndex else { break }
                    start = end + 1
                }
            } catch {
                throw Problem.badRequest(detail: "The request path has an invalid percent-encoding.")
            }
        }
        self.segments = segments
        if let queryPart, QueryParameters.count(in: queryPart) > QueryParameters.maximumCount {
            throw Problem.tooManyQueryParameters
        }
        do {
            self.query = try queryPart.map { part throws(PercentDecodingError) in try QueryParameters(parsing: part) }
                ?? QueryParameters()
        } catch {
            throw Problem.badRequest(detail: "The query string has an invalid percent-encoding.")
        }
    }
}

extension Problem {
    /// 414: more query parameters than a request may carry (`QueryParameters.maximumCount`).
    static var tooManyQueryParameters: Problem {
        Problem(
            type: typeURI("too-many-query-parameters"), status: 414,
            detail: "The request target has more than \(QueryParameters.maximumCount) query parameters.",
            members: [Member("limit", .int(QueryParameters.maximumCount))])
    }
}
