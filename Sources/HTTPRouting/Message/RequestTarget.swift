/// The decoded parts of a raw request target (`/a/b%2Fc?x=1`).
struct RequestTarget {
    var segments: [String]
    var query: QueryParameters

    init(parsing target: String) throws(Problem) {
        var utf8 = Substring(target).utf8[...]
        // absolute-form (`http://host/path`): keep only the path.
        if utf8.first != UInt8(ascii: "/"), let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
           utf8[colon...].dropFirst().starts(with: "//".utf8) {
            let authority = utf8[colon...].dropFirst(3)
            utf8 = utf8[(authority.firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex)...]
        }
        let pathPart: Substring.UTF8View.SubSequence
        let queryPart: Substring.UTF8View.SubSequence?
        if let question = utf8.firstIndex(of: UInt8(ascii: "?")) {
            pathPart = utf8[utf8.startIndex..<question]
            queryPart = utf8[utf8.index(after: question)...]
        } else {
            pathPart = utf8
            queryPart = nil
        }
        var path = pathPart
        if path.first == UInt8(ascii: "/") { path = path.dropFirst() }
        do {
            var segments: [String] = []
            if !path.isEmpty {
                for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                    segments.append(try PercentDecoding.decode(segment, plusAsSpace: false))
                }
            }
            self.segments = segments
        } catch {
            throw Problem.badRequest(detail: "The request path has an invalid percent-encoding.")
        }
        do {
            if let queryPart {
                self.query = try QueryParameters(parsing: Substring(queryPart))
            } else {
                self.query = QueryParameters()
            }
        } catch {
            throw Problem.badRequest(detail: "The query string has an invalid percent-encoding.")
        }
    }
}
