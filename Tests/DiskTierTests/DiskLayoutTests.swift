import Testing

@testable import DiskTier

@Suite struct DiskLayoutTests {
    @Test func layoutIsTwoLevelsOfHexFromTheKeyHash() {
        let layout = DiskLayout(root: "/data/")
        let name = DiskLayout.fileName(for: "../../etc/passwd")
        #expect(DiskLayout.isEntryFileName(name))
        #expect(layout.path(for: "../../etc/passwd") == "/data/\(name.prefix(1))/\(name.dropFirst().prefix(2))/\(name)")
        // SHA-256("abc"), a published test vector.
        #expect(DiskLayout.fileName(for: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
