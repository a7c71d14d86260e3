extension Problem {
    /// The problem as an `application/problem+json` response with its extra headers.
    public var response: Response {
        var headers = self.headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/problem+json")
        return Response(status: status, headers: headers, body: Array(json.utf8))
    }

    /// The JSON text of the problem object.
    public var json: String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("type", .string(type))
        writer.member("title", .string(title))
        writer.member("status", .int(status))
        writer.member("detail", .string(detail))
        for member in members {
            writer.member(member.name, member.value)
        }
        writer.endObject()
        return writer.text
    }
}

/// A minimal JSON writer for problem documents (no Foundation needed).
struct JSONWriter {
    private(set) var text = ""
    private var needsComma = false

    mutating func beginObject() {
        text.append("{")
        needsComma = false
    }

    mutating func endObject() {
        text.append("}")
        needsComma = true
    }

    mutating func member(_ name: String, _ value: ProblemValue) {
        if needsComma { text.append(",") }
        appendString(name)
        text.append(":")
        switch value {
        case .string(let string): appendString(string)
        case .int(let int): text.append(String(int))
        case .bool(let bool): text.append(bool ? "true" : "false")
        case .strings(let strings):
            text.append("[")
            for (index, string) in strings.enumerated() {
                if index > 0 { text.append(",") }
                appendString(string)
            }
            text.append("]")
        }
        needsComma = true
    }

    private mutating func appendString(_ string: String) {
        text.append("\"")
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text.append("\\\"")
            case "\\": text.append("\\\\")
            case "\n": text.append("\\n")
            case "\r": text.append("\\r")
            case "\t": text.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text.append("\"")
    }
}
