import CProcess
import Glibc
import Logging

/// What the process does to itself before it loads a secret (CONTRACT §8.9, §14.6): with a key ring, a TLS key, an
/// admin token, or a Redis password (URL or file), TLS client key or Sentinel password configured, no core dump may
/// carry them (or a cached body) out of its memory.
enum ProcessHardening {
    /// Whether `configuration` names a secret the process will hold.
    static func holdsSecrets(_ configuration: UnicacheConfiguration) -> Bool {
        configuration.encryption.keyFile != nil || configuration.server.tls != nil || configuration.admin.isTokenSet
            || configuration.shared.redis?.holdsSecrets == true
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
