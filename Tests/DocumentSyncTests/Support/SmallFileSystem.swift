import Foundation

/// A small memory file system (tmpfs) mounted for one test at a folder, so that a disk can
/// really fill up: writes past its size fail with ENOSPC, as on a full disk. Unmounted when
/// the value goes away. Needs the right to mount (root, as the tests run here and in CI).
final class SmallFileSystem: @unchecked Sendable {
    let url: URL

    /// Mounts a tmpfs of `kibibytes` at `url`, an empty folder.
    init(at url: URL, kibibytes: Int) throws {
        self.url = url
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0755", "tmpfs", url.path])
    }

    /// Makes it `kibibytes` big, keeping what it holds: the disk that was full has room now.
    func resize(kibibytes: Int) throws {
        try Self.run("/bin/mount", ["-o", "remount,size=\(kibibytes)k", url.path])
    }

    deinit {
        try? Self.run("/bin/umount", ["-l", url.path])
    }

    private static func run(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey: "\(program) \(arguments.joined(separator: " ")): \(message)"
                ])
        }
    }
}
