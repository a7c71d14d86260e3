import Redis
import Testing

@Suite("Redis URLs")
struct RedisURLTests {
    @Test func plainAndTLSNodes() throws {
        let plain = try RedisEndpoint(url: "redis://cache.internal:6380/2")
        #expect(plain.target == .node(.init(host: "cache.internal", port: 6380)))
        #expect(plain.tls == nil && plain.database == 2 && plain.user == nil && plain.password == nil)

        let tls = try RedisEndpoint(url: "rediss://app:p%40ss%2Fw@[::1]")
        #expect(tls.target == .node(.init(host: "::1", port: 6379)))
        #expect(tls.tls == RedisTLSOptions() && tls.user == "app" && tls.password == "p@ss/w")
        #expect(tls.description == "rediss://app:***@[::1]:6379/0")

        let passwordOnly = try RedisEndpoint(url: "redis://:secret@127.0.0.1")
        #expect(passwordOnly.user == nil && passwordOnly.password == "secret")
        #expect(!passwordOnly.description.contains("secret"))
    }

    @Test func sentinelGroups() throws {
        let url = try RedisEndpoint(url: "redis-sentinel://app:pw@s1,s2:26380,[::1]/3?master=cache&sentinel-password=sp&tls=true")
        #expect(url.target == .sentinel(
            sentinels: [.init(host: "s1", port: 26379), .init(host: "s2", port: 26380), .init(host: "::1", port: 26379)],
            masterName: "cache", password: "sp"))
        #expect(url.tls != nil && url.user == "app" && url.password == "pw" && url.database == 3)
        #expect(url.description == "redis-sentinel://app:***@s1:26379,s2:26380,[::1]:26379/3?master=cache&sentinel-password=***&tls=true")
        // Before a primary is known, the first Sentinel is what is shown; its Sentinels are trusted only over TLS.
        #expect(url.address == .init(host: "s1", port: 26379))
        #expect(url.sentinelsTrustedUnauthenticated.isEmpty)
        #expect(url.holdsSecrets)
    }

    @Test func clusterSeeds() throws {
        let url = try RedisEndpoint(url: "rediss://app:pw@n1:7000?addr=n2:7001&addr=[::1]", cluster: true)
        #expect(url.target == .cluster(seeds: [.init(host: "n1", port: 7000), .init(host: "n2", port: 7001), .init(host: "::1", port: 6379)]))
        #expect(url.tls != nil && url.user == "app" && url.password == "pw" && url.database == 0)
        #expect(url.description == "rediss://app:***@n1:7000/0?addr=n2:7001&addr=[::1]:6379")
        #expect(url.address == .init(host: "n1", port: 7000))
        #expect(try RedisEndpoint(url: "redis://n1", cluster: true).target == .cluster(seeds: [.init(host: "n1", port: 6379)]))
        // Without --redis-cluster, a seed list is no URL; a cluster has database 0 alone and no Sentinels.
        for (text, cluster) in [
            ("redis://n1?addr=n2", false), ("redis://n1/1", true), ("redis-sentinel://s1?master=m", true),
            ("redis://n1?addr=n2:99999", true), ("redis://n1?master=m", true),
        ] {
            #expect(throws: RedisError.self, "\(text)") { try RedisEndpoint(url: text, cluster: cluster) }
        }
    }

    @Test(arguments: [
        "http://x", "redis//x", "redis://", "redis://:pw@", "redis://host:0", "redis://host:70000", "redis://host/abc",
        "redis://host?master=x", "redis-sentinel://s1", "redis-sentinel://s1,,s2?master=m", "redis-sentinel://s1?master=m&tls=yes",
        "redis://:%zz@host", "redis://h#frag", "redis://999.1.1.1", "rediss://a b:1", "redis://host.123:6379",
        "redis://[::1%zz]", "redis-sentinel://s1,1.2.3?master=m",
    ])
    func malformedURLsAreRefusedWithoutEchoingSecrets(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisEndpoint(url: url) }
        guard case .invalidURL(let message)? = error else {
            Issue.record("not an invalid URL: \(String(describing: error))")
            return
        }
        #expect(!message.contains("pw"))
    }
}
