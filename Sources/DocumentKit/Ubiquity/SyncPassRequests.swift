import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Passes asked of a container's sync agent by another process (`docs sync --once` while the
/// agent runs), and the agent's answers: a folder beside the journal, `HASH.passes/`, only its
/// user can enter.
///
/// A request is a file `ID.request` (ID 32 hexadecimal digits). At the start of a pass the
/// agent takes the requests there (renames each to `ID.taken`), so a request made while a pass
/// runs waits for the next one, which sees what was written before the request. After the pass
/// it writes `ID.answer` (what the pass did, or why it failed) and removes `ID.taken`. The
/// asker reads and removes its answer. What a process that died left (a request, a taken
/// request or an answer no one reads) is removed after a day.
package struct SyncPassRequests: Sendable {
    /// The folder of requests and answers.
    package let folder: URL

    package init(forContainer container: URL, stateHome: URL? = nil) {
        folder = SyncStateFiles.passRequests(forContainer: container, stateHome: stateHome)
    }

    /// Where a request stands, as its asker sees it.
    package enum Progress: Equatable, Sendable {
        /// Not taken yet.
        case waiting
        /// Taken by a pass that has not answered yet.
        case taken
        /// Answered: the answer's bytes, removed from the folder.
        case answered(Data)
        /// Neither the request nor an answer is there: the agent lost it.
        case lost
    }

    /// The largest answer read: what a pass did, with its failures and notes.
    private static let largestAnswer = 16 << 20
    /// How old a leftover may be before an agent removes it.
    private static let leftoverAge: TimeInterval = 86_400

    /// Asks for a pass: writes a request, and returns its identifier.
    ///
    /// - Throws: ``DocumentKitError`` naming the folder or file that could not be made.
    package func ask() throws -> String {
        try PrivateFolder.open(at: folder, operation: "make the folder of sync requests")
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let id = bytes.map { String(format: "%02x", $0) }.joined()
        let file = folder.appendingPathComponent("\(id).request")
        _ = try FileDescriptor.open(
            file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600,
            operation: "ask the sync agent for a pass")
        return id
    }

    /// Where the request `id` stands; an answer is read and removed.
    ///
    /// - Throws: ``DocumentKitError`` naming the answer when it is there but cannot be read.
    package func progress(of id: String) throws -> Progress {
        let answer = file(id, "answer")
        if let status = FileStatus(path: answer.path, followingLinks: false) {
            guard status.isRegularFile, status.size <= Self.largestAnswer else {
                _ = Syscall.unlinkat(AT_FDCWD, answer.path)
                throw DocumentKitError(
                    .ioFailure, operation: "read the sync agent's answer", url: answer,
                    detail: "it is not an answer (\(status.size) bytes)")
            }
            let data = try SettingsFile.contents(of: answer, operation: "read the sync agent's answer")
            _ = Syscall.unlinkat(AT_FDCWD, answer.path)
            if let data { return .answered(data) }
        }
        if FileStatus(path: file(id, "taken").path, followingLinks: false) != nil { return .taken }
        if FileStatus(path: file(id, "request").path, followingLinks: false) != nil { return .waiting }
        return .lost
    }

    /// Withdraws the request `id` if it was not taken: true when it was withdrawn.
    package func withdraw(_ id: String) -> Bool {
        if case .success = Syscall.unlinkat(AT_FDCWD, file(id, "request").path) { return true }
        return false
    }

    /// Takes the requests waiting (the agent, at the start of a pass), and removes what was
    /// left a day ago or more.
    package func take() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var taken: [String] = []
        let now = Date()
        for name in names {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, Self.isIdentifier(parts[0]) else { continue }
            let id = String(parts[0])
            if parts[1] == "request",
                case .success = Syscall.renameat(
                    AT_FDCWD, file(id, "request").path, AT_FDCWD, file(id, "taken").path)
            {
                taken.append(id)
            } else if let status = FileStatus(
                path: folder.appendingPathComponent(name).path, followingLinks: false),
                now.timeIntervalSince(status.modification.date) > Self.leftoverAge
            {
                _ = Syscall.unlinkat(AT_FDCWD, folder.appendingPathComponent(name).path)
            }
        }
        return taken
    }

    /// Answers the taken request `id` with `answer` (the agent, after the pass).
    package func answer(_ id: String, with answer: Data) {
        try? SafeSave.write(answer, to: file(id, "answer"), permissions: 0o600)
        _ = Syscall.unlinkat(AT_FDCWD, file(id, "taken").path)
    }

    private func file(_ id: String, _ kind: String) -> URL {
        folder.appendingPathComponent("\(id).\(kind)")
    }

    private static func isIdentifier(_ text: Substring) -> Bool {
        text.utf8.count == 32
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
