import Redis
import TLSTestSupport
import TestSupport


/// A Redis Cluster of real `redis-server` nodes on free loopback ports, for tests: `primaries` primaries with
/// `replicasPerPrimary` replicas each (`redis-cli --cluster create … --cluster-yes`), every node with
/// `cluster-node-timeout 1000` (a killed primary's replica is promoted about 2 s later) and
/// `cluster-require-full-coverage no` (a shard down leaves the others writable). Each node is stopped by its PID.
public final class RedisTestCluster: StoppableService {
    /// Every node, in the order given to `redis-cli` (which makes the first `primaries` the primaries).
    public let nodes: [RedisServerProcess]
    private let folder: TemporaryFolder

    private init(nodes: [RedisServerProcess], folder: TemporaryFolder) {
        self.nodes = nodes
        self.folder = folder
    }

    /// Starts the nodes, makes them a cluster and returns once every node says `cluster_state:ok`. With `tls`, each
    /// node also listens for TLS (`tls-port`, a free port of its own, its certificate `tls.server` from `tls.pki`) and
    /// the cluster bus and replication run over TLS (`tls-cluster yes`: nodes verify one another, so each presents
    /// `tls.client`, a client certificate, when it connects); the plain ports stay for the tests' own commands.
    public static func start(
        primaries: Int = 3, replicasPerPrimary: Int = 1, extraArguments: [String] = [],
        tls: (pki: TestCertificate.Authority, server: (certificate: String, key: String), client: (certificate: String, key: String))? = nil
    ) async throws -> RedisTestCluster {
        // On tmpfs when there is one: a node stalled 1 s on an fsync of its nodes.conf is failed over by the others.
        let folder = try TemporaryFolder("redis-cluster", under: TemporaryFolder.memoryBacked)
        var nodes: [RedisServerProcess] = []
        do {
            for _ in 0..<(primaries * (1 + replicasPerPrimary)) {
                nodes.append(try await RedisServerProcess.start(directory: folder.path) { port in
                    // The cluster bus needs a free port too (`cluster-port`: by default the port + 10000).
                    let bus = try ReservedPort()
                    bus.release()
                    var tlsArguments: [String] = []
                    if let tls {
                        let tlsPort = try ReservedPort()
                        tlsPort.release()
                        tlsArguments = [
                            "--tls-port", String(tlsPort.port), "--tls-cert-file", tls.server.certificate,
                            "--tls-key-file", tls.server.key, "--tls-client-cert-file", tls.client.certificate,
                            "--tls-client-key-file", tls.client.key, "--tls-ca-cert-file", tls.pki.caFile,
                            "--tls-auth-clients", "no", "--tls-cluster", "yes", "--tls-replication", "yes",
                        ]
                    }
                    return RedisServerProcess.standardArguments(port: port, directory: folder.path) + tlsArguments + [
                        "--cluster-enabled", "yes", "--cluster-config-file", "nodes-\(port).conf",
                        "--cluster-port", String(bus.port), "--cluster-node-timeout", "1000",
                        "--cluster-require-full-coverage", "no",
                    ] + extraArguments
                })
            }
            let cluster = RedisTestCluster(nodes: nodes, folder: folder)
            try await cluster.create(replicasPerPrimary: replicasPerPrimary)
            return cluster
        } catch {
            for node in nodes { await node.stop() }
            folder.remove()
            throw error
        }
    }

    /// A seed node's endpoint (the first node).
    public var seed: RedisEndpoint { nodes[0].endpoint }

    /// The node listening on `port`.
    public func node(at port: Int) -> RedisServerProcess? {
        nodes.first { $0.port == port }
    }

    /// Starts moving `slot` from `source` to `target` as `redis-cli --cluster reshard` does: the target importing, the
    /// source migrating, the slot's keys migrated. Commands on the slot are then answered `ASK` by the source.
    public func beginMoving(_ slot: Int, from source: RedisServerProcess, to target: RedisServerProcess) async throws {
        _ = try await redisCommand(target, "CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", try await nodeID(source))
        _ = try await redisCommand(source, "CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", try await nodeID(target))
        let keys = try await redisCommand(source, "CLUSTER", "GETKEYSINSLOT", "\(slot)", "1000").array ?? []
        for key in keys.compactMap(\.text) {
            _ = try await redisCommand(source, "MIGRATE", "127.0.0.1", "\(target.port)", key, "0", "5000")
        }
    }

    /// Ends the move: the slot is the target's, told to the target first (which raises its configuration epoch, so
    /// that the source's gossip cannot take the slot back), then to every other node.
    public func finishMoving(_ slot: Int, to target: RedisServerProcess) async throws {
        let targetID = try await nodeID(target)
        for node in [target] + nodes.filter({ $0 !== target }) {
            _ = try await redisCommand(node, "CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID)
        }
    }

    /// `CLUSTER MYID` of `node`.
    public func nodeID(_ node: RedisServerProcess) async throws -> String {
        guard let id = try await redisCommand(node, "CLUSTER", "MYID").text else {
            throw RedisProcessError("CLUSTER MYID of \(node.port) is not text")
        }
        return id
    }

    /// Stops every node (by PID) and removes their files. Idempotent.
    public func stop() async {
        for node in nodes { await node.stop() }
        folder.remove()
    }

    /// `redis-cli --cluster create`, then waits until every node agrees the cluster is whole and every replica is
    /// connected to its primary.
    private func create(replicasPerPrimary: Int) async throws {
        let addresses = nodes.map { "127.0.0.1:\($0.port)" }
        let cli = try ChildProcess.spawn(
            "/usr/bin/redis-cli",
            arguments: ["--cluster", "create"] + addresses + [
                "--cluster-replicas", String(replicasPerPrimary), "--cluster-yes",
            ],
            readyMarker: "All 16384 slots covered")
        // It exits once the nodes have joined (about a second); one that hangs is stopped after 60 s.
        let exited = await cli.waitForExit(within: .seconds(60))
        guard exited else {
            throw RedisProcessError("redis-cli --cluster create did not end within 60 s; it said:\n\(cli.outputText.suffix(2000))")
        }
        for node in nodes {
            // Whole, and a replica in step with its primary: one that never was does not stand for election.
            let whole = try await poll(within: .seconds(30)) {
                let info = try await redisCommand(node, "CLUSTER", "INFO", timeout: .seconds(5)).text ?? ""
                let role = try await redisCommand(node, "ROLE", timeout: .seconds(5)).array ?? []
                let inStep = role.first?.text == "master" || (role.count > 3 && role[3].text == "connected")
                return info.contains("cluster_state:ok") && inStep
            }
            guard whole else {
                throw RedisProcessError(
                    "node \(node.port) was not in a whole cluster (or in step with its primary) within 30 s; redis-cli said:\n\(cli.outputText.suffix(2000))")
            }
        }
    }
}
