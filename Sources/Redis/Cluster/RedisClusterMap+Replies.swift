extension RedisClusterMap {
    /// The map in a `CLUSTER SHARDS` reply (Redis 7): per shard, `slots` (start and end pairs) and `nodes` (each with
    /// `endpoint`, `ip`, `port`, `tls-port`, `role`, `health`). A shard's primary is its `master` that is `online`
    /// (else any `master`); a shard without slots (a failed primary whose replica took over is one) is left out.
    /// `tls`: nodes are reached on their `tls-port`. A node naming no host (`?`, empty) is at `askedHost`.
    init(shardsReply reply: RedisReply, tls: Bool, askedHost: String) throws(RedisError) {
        guard let shardReplies = reply.array else { throw .unexpectedReply("CLUSTER SHARDS did not answer an array") }
        var shards: [Shard] = []
        for shardReply in shardReplies {
            let fields = Self.fields(shardReply)
            guard let slotNumbers = fields["slots"]?.array?.map(\.int), let nodes = fields["nodes"]?.array else {
                throw .unexpectedReply("a shard of CLUSTER SHARDS has no slots or nodes")
            }
            let bounds = slotNumbers.compactMap { $0 }
            guard bounds.count == slotNumbers.count, bounds.count.isMultiple(of: 2) else {
                throw .unexpectedReply("a shard of CLUSTER SHARDS has slots that are not pairs of numbers")
            }
            let slots = stride(from: 0, to: bounds.count, by: 2).compactMap { index in
                bounds[index] <= bounds[index + 1] ? bounds[index]...bounds[index + 1] : nil
            }
            guard !slots.isEmpty else { continue }
            var primaries: [(RedisEndpoint.Address, online: Bool)] = []
            var replicas: [RedisEndpoint.Address] = []
            for node in nodes {
                let fields = Self.fields(node)
                let host = fields["endpoint"]?.text ?? fields["ip"]?.text ?? ""
                let port = (tls ? fields["tls-port"] : fields["port"])?.int
                let address = try RedisEndpoint.Address.named(
                    host: host.isEmpty || host == "?" ? askedHost : host, port: port, by: "a cluster node")
                if fields["role"]?.text == "master" {
                    primaries.append((address, fields["health"]?.text == "online"))
                } else {
                    replicas.append(address)
                }
            }
            guard let primary = primaries.first(where: \.online) ?? primaries.first else { continue }
            shards.append(Shard(primary: primary.0, replicas: replicas, slots: slots, online: primary.online))
        }
        self.init(shards: shards)
    }

    /// The map in a `CLUSTER SLOTS` reply (before Redis 7): per range, `[start, end, primary, replica…]`, each node
    /// `[host, port, id, …]`. Ranges served by one primary make one shard. A node naming no host is at `askedHost`.
    init(slotsReply reply: RedisReply, askedHost: String) throws(RedisError) {
        guard let ranges = reply.array else { throw .unexpectedReply("CLUSTER SLOTS did not answer an array") }
        var shards: [Shard] = []
        for range in ranges {
            guard let parts = range.array, parts.count >= 3, let start = parts[0].int, let end = parts[1].int, start <= end
            else { throw .unexpectedReply("a range of CLUSTER SLOTS is not [start, end, node, …]") }
            let nodes = try parts.dropFirst(2).map { node throws(RedisError) in
                guard let fields = node.array, fields.count >= 2, let host = fields[0].text else {
                    throw .unexpectedReply("a node of CLUSTER SLOTS is not [host, port, …]")
                }
                return try RedisEndpoint.Address.named(
                    host: host.isEmpty || host == "?" ? askedHost : host, port: fields[1].int, by: "a cluster node")
            }
            if let index = shards.firstIndex(where: { $0.primary == nodes[0] }) {
                shards[index].slots.append(start...end)
            } else {
                shards.append(Shard(primary: nodes[0], replicas: Array(nodes.dropFirst()), slots: [start...end]))
            }
        }
        self.init(shards: shards)
    }

    /// A RESP2 map (a flat array of names and values) by name; empty for anything else.
    private static func fields(_ reply: RedisReply) -> [String: RedisReply] {
        guard let elements = reply.array else { return [:] }
        var fields: [String: RedisReply] = [:]
        for index in stride(from: 0, to: elements.count - 1, by: 2) {
            if let name = elements[index].text { fields[name] = elements[index + 1] }
        }
        return fields
    }
}
