import CProcess
import Glibc
import Logging
import Settings

/// What the process does to itself before it loads a secret (CONTRACT §8.9, §14.6): with any secret configured, no
/// core dump may carry it (or a cached body) out of its memory.
enum ProcessHardening {
    /// Every kind of secret a configuration can hand the process, by name, with whether this configuration does. The
    /// one list that decides: a new kind of secret is one more line here.
    static let secrets: [(name: String, isConfigured: @Sendable (UnicacheConfiguration) -> Bool)] = [
        ("key ring", { $0.encryption.keyFile != nil }),
        ("TLS key", { $0.server.tls != nil }),
        ("admin token", { $0.admin.isTokenSet }),
        ("Redis password, TLS client key or Sentinel password", { $0.shared.redis?.holdsSecrets == true }),
        ("upstream header", { $0.upstreams.protection.values.contains { !$0.headers.isEmpty } }),
        ("upstream URL credentials", { $0.upstreams.urls.values.contains(where: carriesCredentials) }),
        ("JWKS URL credentials", { $0.access.jwks.map(carriesCredentials) ?? false }),
    ]

    /// The names of the secrets `configuration` hands the process (empty: none).
    static func heldSecrets(_ configuration: UnicacheConfiguration) -> [String] {
        secrets.filter { $0.isConfigured(configuration) }.map(\.name)
    }

    /// Whether `configuration` names a secret the process will hold.
    static func holdsSecrets(_ configuration: UnicacheConfiguration) -> Bool {
        !heldSecrets(configuration).isEmpty
    }

    /// Whether a URL carries a user or a password (`https://user:pw@host`): an `@` in its authority.
    static func carriesCredentials(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        return url[scheme.upperBound...].prefix { !"/?#".contains($0) }.contains("@")
    }

    /// Core size limit 0 (soft and hard) and not dumpable. A failure is logged, not fatal: the secrets are the
    /// operator's choice, and a container may already forbid both.
    static func forbidCoreDumps(logger: Logger) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            logger.warning("could not set the core size limit to 0", metadata: ["errno": "\(errno)"])
        }
        if unicache_process_set_not_dumpable() != 0 {
            logger.warning("could not make the process not dumpable", metadata: ["errno": "\(errno)"])
        }
    }
}
