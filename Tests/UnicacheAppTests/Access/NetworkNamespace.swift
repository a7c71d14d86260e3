import Foundation
import TestSupport

/// A network namespace joined to this one by a veth pair on 198.18.0.0/15 (RFC 2544's benchmarking range,
/// never routed): the service binds `hostAddress`, a client run with `run(inside:)` comes from `peerAddress`,
/// a peer that is not loopback. Made with iproute2 (we run as root); `stop()` undoes everything, so that
/// `withService(NetworkNamespace.make()) { namespace in … }` removes it however the test ends.
struct NetworkNamespace: StoppableService {
    struct CommandFailed: Error, CustomStringConvertible {
        let description: String
    }

    let name: String
    let hostInterface: String
    let hostAddress: String
    let peerAddress: String

    /// What every namespace the tests make is called: `unicache-<pid>-<id>`, the pid the test process's own, so
    /// that one left by a process that crashed or was killed can be told from one a running test still uses.
    static let prefix = "unicache-"

    static func name(pid: Int32, id: String) -> String { "\(prefix)\(pid)-\(id)" }

    /// The pid a namespace's name carries, if it is one of ours (`unicache-<pid>-<id>`).
    static func owner(of name: String) -> Int32? {
        guard name.hasPrefix(prefix) else { return nil }
        let parts = name.dropFirst(prefix.count).split(separator: "-")
        guard parts.count == 2, let pid = Int32(parts[0]), pid > 0 else { return nil }
        return pid
    }

    /// Whether a process with `pid` exists (`kill(pid, 0)`; EPERM: it exists, owned by another user).
    static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// Deletes the namespaces whose owning process no longer exists (with their veth pairs); returns their names.
    /// A name without a pid (another version's) is left alone: nothing tells whether it is still in use.
    @discardableResult
    static func sweepStale() async throws -> [String] {
        let listed = try await run(["ip", "netns", "list"])
        let stale = listed.split(separator: "\n").compactMap { line -> String? in
            let name = String(line.split(separator: " ").first ?? "")
            guard let pid = owner(of: name), !processExists(pid) else { return nil }
            return name
        }
        for name in stale { try await run(["ip", "netns", "del", name], check: false) }
        return stale
    }

    /// A fresh namespace with a random /30 of 198.18.0.0/15 (so parallel runs do not collide), named for this
    /// process; the namespaces of test processes that are gone are deleted first.
    static func make() async throws -> NetworkNamespace {
        try await sweepStale()
        let id = UInt32.random(in: 0..<0x3FFF)
        let suffix = String(id, radix: 16)
        let third = Int(id >> 6) & 0xFF
        let fourth = Int(id & 0x3F) << 2
        let namespace = NetworkNamespace(
            name: name(pid: getpid(), id: suffix), hostInterface: "ucv\(suffix)a",
            hostAddress: "198.\(18 + Int(id >> 14)).\(third).\(fourth + 1)",
            peerAddress: "198.\(18 + Int(id >> 14)).\(third).\(fourth + 2)")
        let peerInterface = "ucv\(suffix)b"
        do {
            try await run(["ip", "netns", "add", namespace.name])
            try await run(["ip", "link", "add", namespace.hostInterface, "type", "veth", "peer", "name", peerInterface])
            try await run(["ip", "link", "set", peerInterface, "netns", namespace.name])
            try await run(["ip", "addr", "add", "\(namespace.hostAddress)/30", "dev", namespace.hostInterface])
            try await run(["ip", "link", "set", namespace.hostInterface, "up"])
            try await namespace.run(inside: ["ip", "addr", "add", "\(namespace.peerAddress)/30", "dev", peerInterface])
            try await namespace.run(inside: ["ip", "link", "set", peerInterface, "up"])
            try await namespace.run(inside: ["ip", "link", "set", "lo", "up"])
        } catch {
            await namespace.stop()
            throw error
        }
        return namespace
    }

    /// Deletes the namespace (its end of the pair with it, and so the pair) and the host end if it is left; a second
    /// call finds nothing to delete.
    func stop() async {
        _ = try? await Self.run(["ip", "netns", "del", name], check: false)
        _ = try? await Self.run(["ip", "link", "del", hostInterface], check: false)
    }

    /// Bare namespaces made by name (no veth pair, no addresses), deleted by `stop()`: for the sweep's test.
    struct Bare: StoppableService {
        let names: [String]

        static func add(_ names: [String]) async throws -> Bare {
            let made = Bare(names: names)
            do {
                for name in names { try await NetworkNamespace.run(["ip", "netns", "add", name]) }
            } catch {
                await made.stop()
                throw error
            }
            return made
        }

        func stop() async {
            for name in names { _ = try? await NetworkNamespace.run(["ip", "netns", "del", name], check: false) }
        }
    }

    /// Whether the namespace still exists (for the test that it was removed).
    var exists: Bool {
        get async { await Self.exists(name) }
    }

    /// Whether a namespace called `name` exists.
    static func exists(_ name: String) async -> Bool {
        ((try? await run(["ip", "netns", "list"])) ?? "").split(separator: "\n").contains {
            $0.split(separator: " ").first.map(String.init) == name
        }
    }

    @discardableResult
    func run(inside command: [String]) async throws -> String {
        try await Self.run(["ip", "netns", "exec", name] + command)
    }

    /// Runs a command to its end and returns its standard output; a non-zero exit throws (with `check`).
    @discardableResult
    static func run(_ command: [String], check: Bool = true) async throws -> String {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), command)
        if check, result.status != 0 {
            throw CommandFailed(
                description: "\(command.joined(separator: " ")) exited \(result.status): \(result.standardError)")
        }
        return result.standardOutput
    }
}
