import Access
import AccessTestSupport
import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Key sets change (CONTRACT §8.5, §8.6)", .timeLimit(.minutes(2)))
struct KeyRotationTests {
    let old = SigningKey.all[2]
    let new = SigningKey.es256(kid: "next")

    /// A key file in `folder` holding `key`, and a gate that reads it on `clock`.
    func fileGate(
        _ folder: TemporaryFolder, holding key: SigningKey, clock: TestClock
    ) async throws -> (path: String, access: AccessControl) {
        let path = folder.file("jwks.json")
        try Data(jwks([key.jwk()])).write(to: URL(fileURLWithPath: path))
        return (path, try await makeAccess(source: FileJWKSSource(path: path), clock: clock))
    }

    @Test func aRotatedFileIsReadWithinASecond() async throws {
        let folder = try TemporaryFolder("jwks")
        defer { folder.remove() }
        let clock = TestClock()
        let (path, access) = try await fileGate(folder, holding: old, clock: clock)
        let oldToken = TokenMinter.mint(old, claims: claims())
        let newToken = TokenMinter.mint(new, claims: claims())
        #expect(await decide(access, token: oldToken) == nil)
        #expect(try #require(await decide(access, token: newToken)).status == 401)

        // Rotated by rename, as a deployment would: nothing changes until the next check is due.
        let staged = folder.url.appendingPathComponent("jwks.json.new")
        try Data(jwks([new.jwk()])).write(to: staged)
        #expect(rename(staged.path, path) == 0)
        clock.advance(0.5)
        #expect(await decide(access, token: oldToken) == nil)
        clock.advance(0.6)
        #expect(await decide(access, token: newToken) == nil)
        // The old key is gone, and with it the remembered old token.
        #expect(try #require(await decide(access, token: oldToken)).status == 401)
        #expect(access.snapshot.keyRefreshes == 1)
        #expect(access.snapshot.keys == 1)

        // A broken file keeps the last good keys, counted.
        try Data("{".utf8).write(to: URL(fileURLWithPath: path))
        clock.advance(1)
        #expect(await decide(access, token: newToken) == nil)
        #expect(access.snapshot.keyErrors == 1)
        #expect(access.snapshot.keys == 1)
    }

    @Test func aWallClockSetBackMakesAFileCheckDue() async throws {
        let folder = try TemporaryFolder("jwks")
        defer { folder.remove() }
        let clock = TestClock()
        let (path, access) = try await fileGate(folder, holding: old, clock: clock)
        let newToken = TokenMinter.mint(new, claims: claims(now: TestClock.start - 60))
        try Data(jwks([new.jwk()])).write(to: URL(fileURLWithPath: path))
        // Set back a minute: not "no check until the clock catches up", but a check at once.
        clock.setBack(60)
        #expect(await decide(access, token: newToken) == nil)
        #expect(access.snapshot.keyRefreshes == 1)
        // And then at most one a second again.
        clock.advance(0.5)
        #expect(await decide(access, token: newToken) == nil)
        #expect(access.snapshot.keyRefreshes == 1)
    }

    @Test func anUnknownKidFetchesAURLAgainAtMostEvery30Seconds() async throws {
        let clock = TestClock()
        let source = MemoryJWKSSource(jwks([old.jwk()]))
        let access = try await makeAccess(source: source, clock: clock)
        #expect(source.reads == 1)
        source.set(jwks([old.jwk(), new.jwk()]))
        let newToken = TokenMinter.mint(new, claims: claims())
        #expect(await decide(access, token: newToken) == nil)  // fetched at once, then verified
        #expect(source.reads == 2)

        let stranger = TokenMinter.mint(SigningKey.es256(kid: "stranger"), claims: claims())
        clock.advance(10)  // within 30 s of the last fetch: no fetch
        #expect(try #require(await decide(access, token: stranger)).challenge.contains("unknown key"))
        #expect(source.reads == 2)
        for _ in 0..<50 { _ = await decide(access, token: stranger) }
        #expect(source.reads == 2)
        clock.advance(21)
        _ = await decide(access, token: stranger)
        #expect(source.reads == 3)
        #expect(access.snapshot.keyRefreshes == 2)
    }

    /// CONTRACT §8.9: a URL is fetched by a timer every refresh, whether or not requests arrive.
    @Test func aURLIsFetchedEveryRefreshWithoutRequestsAndAFailureKeepsTheKeys() async throws {
        let clock = TestClock()
        let source = MemoryJWKSSource(jwks([old.jwk()]))
        let access = try await makeAccess(source: source, clock: clock)
        let token = TokenMinter.mint(old, claims: claims(lifetime: 7200))
        #expect(await decide(access, token: token) == nil)
        await waitUntil("the refresh timer sleeps") { clock.sleeperCount == 1 }
        clock.advance(599)
        #expect(source.reads == 1)
        source.fail(true)
        clock.advance(2)  // 601 s: the timer fetches, no request asked for it
        await waitUntil("the failed refresh is counted") { access.snapshot.keyErrors == 1 }
        #expect(source.reads == 2)
        #expect(access.snapshot.keys == 1)
        #expect(await decide(access, token: token) == nil)
        source.fail(false)
        source.set(jwks([new.jwk()]))
        await waitUntil("the refresh timer sleeps") { clock.sleeperCount == 1 }
        clock.advance(601)
        await waitUntil("the refresh is counted") { access.snapshot.keyRefreshes == 1 }
        #expect(source.reads == 3)
        // The removed key is not honoured: the remembered token is forgotten with it.
        #expect(try #require(await decide(access, token: token)).status == 401)
    }

    @Test func rememberedTokensPayNoSignatureCheck() async throws {
        let clock = TestClock()
        let source = MemoryJWKSSource(jwks([old.jwk()]))
        let access = try await makeAccess(source: source, clock: clock)
        let token = TokenMinter.mint(old, claims: claims(lifetime: 100))
        #expect(await decide(access, token: token) == nil)
        #expect(access.rememberedCount == 1)
        // Served from the table: no second signature check, and the user check still applies...
        #expect(await decide(access, token: token) == nil)
        #expect(try #require(await decide(access, "/v1/users/bob/profile", token: token)).status == 403)
        #expect(access.signatureChecks == 1)
        // ...until its exp (plus the leeway).
        clock.advance(100 + 61)
        #expect(try #require(await decide(access, token: token)).challenge.contains("expired"))
        #expect(access.rememberedCount == 0)
    }
}
