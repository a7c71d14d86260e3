import Foundation
import Testing

/// What users read cites no document they do not have (the project's contract): README, docs, changelog, the API
/// document and the shipped configuration files say what each rule is. (Code comments may cite it.)
@Suite struct UserDocumentsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Every file a user reads: by name, and every file under `docs/` and `deploy/`.
    static func userFiles() throws -> [URL] {
        var files = ["README.md", "CHANGELOG.md", "openapi.yaml", "compose.yaml", "compose.fleet.yaml", "Dockerfile"]
            .map { root.appendingPathComponent($0) }
        for folder in ["docs", "deploy"] {
            let walker = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let file = walker?.nextObject() as? URL {
                if !file.hasDirectoryPath { files.append(file) }
            }
        }
        return files
    }

    /// `CONTRACT` (any case) or `§` followed by a digit.
    static func citations(in text: String) -> [Substring] {
        text.split(separator: "\n").filter { line in
            line.range(of: "contract", options: .caseInsensitive) != nil
                || line.range(of: "§[0-9]", options: .regularExpression) != nil
        }
    }

    @Test func noUserDocumentCitesTheContract() throws {
        let files = try Self.userFiles()
        #expect(files.count > 20)
        for file in files {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            #expect(Self.citations(in: text).isEmpty, "\(file.lastPathComponent): \(Self.citations(in: text))")
        }
    }

    @Test(.executableBuilt, arguments: [["--help"], ["serve", "--help"], ["healthcheck", "--help"], ["top", "--help"]])
    func noHelpCitesTheContract(_ arguments: [String]) async throws {
        let help = try await BuiltExecutable.run(arguments).standardOutput
        #expect(!help.isEmpty)
        #expect(Self.citations(in: help).isEmpty, "\(Self.citations(in: help))")
    }
}
