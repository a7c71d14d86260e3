import Redis
import Testing

@testable import Redis

/// The cluster's vocabulary without a cluster: key slots, the slot map from either reply, redirections.
@Suite("Redis Cluster: slots, maps, redirections")
struct RedisClusterMapTests {
    @Test func aKeysSlotIsCRC16OfTheKeyOrItsHashTag() {
        // Redis Cluster's specification gives CRC16("123456789") = 0x31C3.
        #expect(RedisHashSlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(RedisHashSlot.of("123456789") == 12739)
        #expect(RedisHashSlot.of("foo") == 12182)
        // Bytes, a slice, and a collection with no contiguous storage: the same slot.
        #expect(RedisHashSlot.of(Array("foo".utf8)) == 12182 && RedisHashSlot.of(Array("xfoo".utf8).dropFirst()) == 12182)
        #expect(RedisHashSlot.of("{user1000}.following".utf8.lazy.map { $0 }) == RedisHashSlot.of("user1000"))
        #expect(RedisHashSlot.of("{user1000}.following") == RedisHashSlot.of("{user1000}.followers"))
        #expect(RedisHashSlot.of("{user1000}.following") == RedisHashSlot.of("user1000"))
        // The first `{` and the first `}` after it; an empty tag hashes the whole key.
        #expect(RedisHashSlot.of("foo{}{bar}") != RedisHashSlot.of("bar"))
        #expect(RedisHashSlot.of("foo{{bar}}zap") == RedisHashSlot.of("{bar"))
        #expect(RedisHashSlot.of("foo{bar}{zap}") == RedisHashSlot.of("bar"))
        #expect(RedisHashSlot.of("no}tag{") == Int(RedisHashSlot.crc16(Array("no}tag{".utf8)) & 0x3FFF))
    }

    @Test func cluster_shardsNamesEachShardsOnlinePrimaryAndLeavesOutAShardWithoutSlots() throws {
        let reply = RedisReply.array([
            shard(slots: [0, 5460, 5462, 5462], nodes: [
                node(port: 7001, role: "master", health: "online"), node(port: 7004, role: "replica", health: "online"),
            ]),
            // A primary that failed and whose replica took over: a shard of its own, without slots.
            shard(slots: [], nodes: [node(port: 7002, role: "master", health: "fail")]),
            shard(slots: [5463, 16383], nodes: [
                node(port: 7005, role: "master", health: "fail"), node(port: 7003, role: "master", health: "online"),
                node(port: 7006, role: "replica", health: "online", endpoint: ""),
            ]),
        ])
        let map = try RedisClusterMap(shardsReply: reply, tls: false, askedHost: "10.0.0.9")
        #expect(map.primaries == [address(7001), address(7003)])
        #expect(map.shards[1].replicas.contains(RedisEndpoint.Address(host: "10.0.0.9", port: 7006)))
        #expect(map.nodeCount == 4)
        #expect(map.slotsCovered == 16384 - 1 && map.slotsServed == 16384 - 1)
        #expect(map.primary(serving: 0) == address(7001))
        #expect(map.primary(serving: 5461) == nil)
        #expect(map.primary(serving: 5462) == address(7001))
        #expect(map.primary(serving: 16383) == address(7003))
        #expect(map.primary(serving: 16384) == nil)

        let tls = try RedisClusterMap(shardsReply: reply, tls: true, askedHost: "10.0.0.9")
        #expect(tls.primaries.map(\.port) == [17001, 17003])
    }

    /// A shard whose only primary failed, with no replica to promote, keeps its slots and its keys still go to that
    /// primary (they fail there, as Redis answers), but its slots are not served: `/stats`' `slotsCovered` falls
    /// below 16384 (it stayed at 16384 while a shard was down).
    @Test func aFailedPrimaryKeepsItsSlotsButDoesNotServeThem() throws {
        let reply = RedisReply.array([
            shard(slots: [0, 5460], nodes: [node(port: 7001, role: "master", health: "online")]),
            shard(slots: [5461, 16383], nodes: [node(port: 7002, role: "master", health: "fail")]),
        ])
        let map = try RedisClusterMap(shardsReply: reply, tls: false, askedHost: "x")
        #expect(map.primary(serving: 5461) == address(7002))
        #expect(map.slotsCovered == 16384)
        #expect(map.slotsServed == 5461)
        #expect(RedisClusterMap(shards: [.init(primary: address(7001), slots: [0...16383])]).slotsServed == 16384)
    }

    @Test func cluster_slotsGroupsRangesByPrimary() throws {
        func range(_ start: Int, _ end: Int, _ ports: Int...) -> RedisReply {
            .array([.integer(start), .integer(end)] + ports.map { .array([.string(Array("127.0.0.1".utf8)), .integer($0), .string(Array("id".utf8))]) })
        }
        let map = try RedisClusterMap(
            slotsReply: .array([range(0, 99, 7001, 7004), range(100, 199, 7002), range(200, 16383, 7001)]), askedHost: "x")
        #expect(map.primaries == [address(7001), address(7002)])
        #expect(map.primary(serving: 250) == address(7001))
        #expect(map.primary(serving: 150) == address(7002))
        #expect(map.slotsCovered == 16384 && map.slotsServed == 16384)
        #expect(map.nodeCount == 3)
    }

    @Test func aForgedHostInTheMapIsRefused() {
        let reply = RedisReply.array([
            shard(slots: [0, 16383], nodes: [node(port: 7001, role: "master", health: "online", endpoint: "evil\u{1B}[31m")]),
        ])
        #expect(throws: RedisError.self) { try RedisClusterMap(shardsReply: reply, tls: false, askedHost: "x") }
    }

    @Test func movedAskAndTryAgainAreRead() {
        func error(_ text: String) -> RedisReply { .error(RedisErrorReply(message: text)) }
        #expect(RedisRedirection(error("MOVED 3999 127.0.0.1:6381"), askedHost: "h") == .moved(slot: 3999, to: address(6381)))
        #expect(RedisRedirection(error("ASK 3999 10.1.2.3:6380"), askedHost: "h")
            == .ask(slot: 3999, to: RedisEndpoint.Address(host: "10.1.2.3", port: 6380)))
        #expect(RedisRedirection(error("MOVED 12 :7000"), askedHost: "h") == .moved(slot: 12, to: RedisEndpoint.Address(host: "h", port: 7000)))
        #expect(RedisRedirection(error("MOVED 12 [::1]:7000"), askedHost: "h") == .moved(slot: 12, to: RedisEndpoint.Address(host: "::1", port: 7000)))
        #expect(RedisRedirection(error("TRYAGAIN Multiple keys request during rehashing of slot"), askedHost: "h") == .tryAgain)
        #expect(RedisRedirection(error("MOVED 99999 127.0.0.1:1"), askedHost: "h") == nil)
        #expect(RedisRedirection(error("ERR something"), askedHost: "h") == nil)
        #expect(RedisRedirection(.status("OK"), askedHost: "h") == nil)
    }

    @Test func aMovedSlotChangesOnlyThatSlotsOwner() {
        let map = RedisClusterMap(shards: [
            .init(primary: address(7001), slots: [0...8191]), .init(primary: address(7002), slots: [8192...16383]),
        ])
        let moved = map.moving(5, to: address(7002)).moving(6, to: address(7009))
        #expect(moved.primary(serving: 5) == address(7002))
        #expect(moved.primary(serving: 6) == address(7009))
        #expect(moved.primary(serving: 7) == address(7001))
        #expect(moved.slotsCovered == 16384)
    }

    private func address(_ port: Int) -> RedisEndpoint.Address {
        RedisEndpoint.Address(host: "127.0.0.1", port: port)
    }

    private func shard(slots: [Int], nodes: [RedisReply]) -> RedisReply {
        .array([text("slots"), .array(slots.map(RedisReply.integer)), text("nodes"), .array(nodes)])
    }

    private func node(port: Int, role: String, health: String, endpoint: String = "127.0.0.1") -> RedisReply {
        .array([
            text("id"), text("x"), text("port"), .integer(port), text("tls-port"), .integer(port + 10000), text("ip"),
            text("127.0.0.1"), text("endpoint"), text(endpoint), text("role"), text(role), text("health"), text(health),
        ])
    }

    private func text(_ value: String) -> RedisReply { .string(Array(value.utf8)) }
}
