import Foundation
import TestSupport
import Testing

/// A fresh folder with `name` holding `contents` at `mode`: a secret file for the options that read one.
func secretFile(_ contents: String, mode: Int, name: String) throws -> (folder: TemporaryFolder, path: String) {
    let folder = try TemporaryFolder("secret")
    let path = folder.file(name)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    return (folder, path)
}

/// Runs `body` with the path of a secret file as `secretFile` makes it, its folder removed afterwards.
func withSecretFile<T>(_ contents: String, mode: Int, name: String, _ body: (String) throws -> T) throws -> T {
    let (folder, path) = try secretFile(contents, mode: mode, name: name)
    defer { folder.remove() }
    return try body(path)
}
