extension String {
    /// The text quoted, with printable ASCII as it is and everything else (control characters, escape codes,
    /// non-ASCII) as `\u{…}`, at most 64 characters of it: a peer's text fit for a log line.
    package var escapedForLog: String {
        var shown = ""
        var count = 0
        for scalar in unicodeScalars {
            guard count < 64 else {
                shown += "…"
                break
            }
            count += 1
            if (0x20...0x7E).contains(scalar.value), scalar != "\\", scalar != "\"" {
                shown.unicodeScalars.append(scalar)
            } else {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return "\"\(shown)\""
    }
}
