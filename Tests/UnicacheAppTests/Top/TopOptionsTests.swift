@testable import Settings
import TLSTestSupport
import Testing
import Tools

/// `unicache top --url`: http://, or https:// with the service's certificate pinned as the healthcheck pins it.
@Suite struct TopOptionsTests {
    @Test func theSchemeDecidesAndHTTPSNeedsTheCertificate() throws {
        let files = try TestCertificate().write()
        defer { files.folder.remove() }
        let plain = try TopOptions.source(url: nil, tlsCert: nil, environment: [:])
        #expect(plain.url == "http://127.0.0.1:8080")
        #expect(plain.tls == nil)
        // The service's own variable: the default URL turns https://; a plain URL given beside it stays plain.
        let service = ["UNICACHE_TLS_CERT": files.certificate]
        let secure = try TopOptions.source(url: nil, tlsCert: nil, environment: service)
        #expect(secure.url == "https://127.0.0.1:8080")
        #expect(secure.tls != nil)
        #expect(try TopOptions.source(url: "http://127.0.0.1:9000", tlsCert: nil, environment: service).tls == nil)
        #expect(try TopOptions.source(url: "https://h:9443", tlsCert: files.certificate, environment: [:]).tls != nil)
    }

    @Test(arguments: [
        ("https://127.0.0.1:8443", nil, "--url: \"https://127.0.0.1:8443\" is not readable without the service's certificate"),
        ("http://127.0.0.1:8080", "cert.pem", "--tls-cert: \"cert.pem\" is not used for an http:// URL"),
        ("ftp://127.0.0.1:8080", nil, "--url: \"ftp://127.0.0.1:8080\" is not a service URL"),
    ] as [(String, String?, String)])
    func aURLTopCannotReadIsOneLine(_ url: String, _ certificate: String?, _ message: String) {
        #expect {
            try TopOptions.source(url: url, tlsCert: certificate, environment: [:])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.message.hasPrefix(message) && !error.message.contains("\n")
        }
    }
}
