/// `host:port` as it appears in a URL or a `Host` header: an IPv6 literal in brackets (`[::1]:8080`).
public func authority(host: String, port: Int) -> String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
}
