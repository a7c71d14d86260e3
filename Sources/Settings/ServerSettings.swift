import MicroHTTPServer

/// How the HTTP server listens and bounds its connections (CONTRACT §1): the server's own configuration,
/// filled from `--host`, `--port`, `--max-connections`, `--max-connections-per-ip`, `--idle-timeout`,
/// `--header-timeout`, `--header-stall` and `--request-timeout` (and their environment variables); request ids (`X-Request-ID`,
/// CONTRACT §7.4) on; the rest keeps the server's defaults.
public typealias ServerSettings = MicroHTTPServerConfiguration
