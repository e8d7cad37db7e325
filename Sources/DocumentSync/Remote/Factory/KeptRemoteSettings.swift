import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file of `folder` (under `DocumentKit/` in the state folder) that keeps something of the
/// remote at `url`: named by the SHA-256 of the URL, so that no URL, however odd, makes a path.
func keptRemoteFile(in folder: String, for url: String, extension suffix: String, stateHome: URL?) -> URL {
    (stateHome ?? SyncJournal.defaultStateHome())
        .appendingPathComponent("DocumentKit/\(folder)", isDirectory: true)
        .appendingPathComponent("\(ContentHash(of: Data(url.utf8)).hex).\(suffix)")
}

/// What is kept of a remote between runs, in a file of mode 0600 under the state folder
/// named after its URL (without credentials): never a password or a secret key.
protocol KeptRemoteSettings: Codable {
    /// The remote's URL, without credentials.
    var url: String { get }
}

extension KeptRemoteSettings {
    static func file(for url: String, stateHome: URL?) -> URL {
        keptRemoteFile(in: "remotes", for: url, extension: "json", stateHome: stateHome)
    }

    static func read(for url: String, stateHome: URL?) -> Self? {
        guard let data = FileManager.default.contents(atPath: file(for: url, stateHome: stateHome).path)
        else {
            return nil
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Self.self, from: data)
    }

    /// Writes the file, private to its owner from the first byte (made 0600, then filled).
    func write(stateHome: URL?) throws {
        let file = Self.file(for: url, stateHome: stateHome)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(self)
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).new")
        try? FileManager.default.removeItem(at: temporary)
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw RemoteSetupError(
                .settingsNotKept, "cannot write the remote's settings at \(temporary.path)")
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.write(contentsOf: data)
        try handle.synchronize()
        try handle.close()
        _ = try Syscall.renameat(AT_FDCWD, temporary.path, AT_FDCWD, file.path).get(
            "keep the remote's settings", file)
    }
}
