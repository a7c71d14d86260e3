import Settings
import Testing
import UnicacheApp

/// `--encryption-migrate` (CONTRACT §9.2): a flag, or `UNICACHE_ENCRYPTION_MIGRATE` as a boolean; only with a key
/// ring (without one there is nothing to migrate to, and start-up stops naming the flag).
@Suite(.timeLimit(.minutes(10))) struct EncryptionMigrateOptionTests {
    @Test func offByDefaultAndOnWithTheFlagOrTheVariable() throws {
        let keys = ["--encryption-keys", "/run/secrets/keys"]
        #expect(try UnicacheConfiguration.parse(arguments: keys, environment: [:]).encryption.migrate == false)
        #expect(try UnicacheConfiguration.parse(arguments: keys + ["--encryption-migrate"], environment: [:]).encryption.migrate)
        for text in ["true", "1", "yes", "ON"] {
            let configuration = try UnicacheConfiguration.parse(
                arguments: keys, environment: ["UNICACHE_ENCRYPTION_MIGRATE": text])
            #expect(configuration.encryption.migrate, "\(text)")
        }
        let off = try UnicacheConfiguration.parse(
            arguments: keys, environment: ["UNICACHE_ENCRYPTION_MIGRATE": "false"])
        #expect(off.encryption.migrate == false)
    }

    @Test func withoutAKeyRingItStopsStartUpNamingTheFlag() throws {
        do {
            _ = try UnicacheConfiguration.parse(arguments: ["--encryption-migrate"], environment: [:])
            Issue.record("accepted without a key ring")
        } catch {
            #expect(error.message.hasPrefix("--encryption-migrate: "), "\(error.message)")
            #expect(error.message.contains("--encryption-keys"))
        }
        do {
            _ = try UnicacheConfiguration.parse(arguments: [], environment: ["UNICACHE_ENCRYPTION_MIGRATE": "true"])
            Issue.record("accepted without a key ring")
        } catch {
            #expect(error.message.hasPrefix("UNICACHE_ENCRYPTION_MIGRATE: "), "\(error.message)")
        }
        // Off is no error without a ring.
        #expect(try UnicacheConfiguration.parse(arguments: [], environment: ["UNICACHE_ENCRYPTION_MIGRATE": "0"]).encryption.migrate == false)
    }

    @Test func aVariableThatIsNotABooleanIsAnError() throws {
        do {
            _ = try UnicacheConfiguration.parse(
                arguments: ["--encryption-keys", "/k"], environment: ["UNICACHE_ENCRYPTION_MIGRATE": "maybe"])
            Issue.record("accepted \"maybe\"")
        } catch {
            #expect(error.message.hasPrefix(#"UNICACHE_ENCRYPTION_MIGRATE: "maybe" is not a boolean"#), "\(error.message)")
        }
    }
}
