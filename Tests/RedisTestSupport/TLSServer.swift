import TLSTestSupport

extension RedisServerProcess {
    /// A redis-server with only a TLS port (the plain one off), its certificate `certificate` from `pki`, clients
    /// verified against `pki` when `authClients`.
    public static func startTLS(
        pki: TestCertificate.Authority, certificate: (certificate: String, key: String), authClients: Bool, password: String? = nil,
        extraArguments: [String] = []
    ) async throws -> RedisServerProcess {
        try await start(password: password) { port in
            standardArguments(port: port, password: password) + [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", certificate.certificate,
                "--tls-key-file", certificate.key, "--tls-ca-cert-file", pki.caFile,
                "--tls-auth-clients", authClients ? "yes" : "no",
            ] + extraArguments
        }
    }
}
