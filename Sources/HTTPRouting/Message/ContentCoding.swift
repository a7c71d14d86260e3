/// `Content-Encoding` (RFC 9110 section 8.4): whether a message's body is in a content coding. The service stores and
/// serves bodies as they are, with no coding of their own, so both the raw `PUT` and an upstream's answer ask this.
package enum ContentCoding {
    /// `true` when the `Content-Encoding` field values name a coding other than `identity` (an empty value names none).
    package static func isEncoded(_ values: some Sequence<String>) -> Bool {
        values.contains { value in
            value.lowercased().split(separator: ",").contains { item in
                // The item's words between optional whitespace: none (an empty item), or anything but `identity`.
                let words = item.split { $0 == " " || $0 == "\t" }
                return !words.isEmpty && words != ["identity"]
            }
        }
    }
}
