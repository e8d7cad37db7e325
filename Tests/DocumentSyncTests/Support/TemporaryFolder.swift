import Foundation

/// A temporary folder for one test, removed when the value goes away.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    /// - Parameter inMemory: Whether to prefer a memory file system (`/dev/shm`) where there
    ///   is one: for tests that make thousands of folders and whose subject is not durability,
    ///   since a flush there costs nothing.
    init(_ name: String = #function, inMemory: Bool = false) throws {
        let memory = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base =
            inMemory && FileManager.default.isWritableFile(atPath: memory.path)
            ? memory : URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        url = base.appendingPathComponent("ds-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ relativePath: String) -> URL {
        url.appendingPathComponent(relativePath)
    }

    /// Makes a folder inside, with its parents.
    @discardableResult
    func folder(_ relativePath: String) throws -> URL {
        let folder = url.appendingPathComponent(relativePath, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @discardableResult
    func write(_ contents: Data, to relativePath: String) throws -> URL {
        let target = file(relativePath)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: target)
        return target
    }

    /// The names in a folder inside (or the folder itself), sorted.
    func names(in relativePath: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(
            atPath: relativePath.isEmpty ? url.path : file(relativePath).path
        )
        .sorted()
    }
}
