import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// Files that change or vanish while sync reads them, and remotes that refuse: a clear
/// failure naming the item, nothing lost, and the next pass goes on.
@Suite struct SyncBadInputTests {
    let folder: TemporaryFolder
    let remote: LocalFolderRemote

    init() throws {
        folder = try TemporaryFolder()
        remote = LocalFolderRemote(root: try folder.folder("remote"))
    }

    @Test func aFileThatVanishesMidUploadEndsDeletedOnBothSidesNeverTorn() throws {
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        try a.write("brief.txt", String(repeating: "a long brief\n", count: 5000))
        let url = a.url("brief.txt")
        try a.opened().checkpoint = { step in
            if step == .beforeRemoteWrite, FileManager.default.fileExists(atPath: url.path) {
                try FileManager.default.removeItem(at: url)
            }
        }
        try a.sync()
        try b.sync()
        #expect(!a.exists("brief.txt") && !b.exists("brief.txt"))
        #expect(!FileManager.default.fileExists(atPath: remote.root.appendingPathComponent("brief.txt").path))
    }

    /// A program that does not coordinate appends while the upload reads: what went up is
    /// not taken as the file's state, and the next pass sends the whole file.
    @Test func aFileWrittenDuringItsUploadIsUploadedAgainWhole() throws {
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        try a.write("log.txt", "first line\n")
        let url = a.url("log.txt")
        var appended = false
        try a.opened().checkpoint = { step in
            if step == .beforeRemoteWrite, !appended {
                appended = true
                let handle = try FileHandle(forWritingTo: url)
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("appended during the upload\n".utf8))
                try handle.close()
            }
        }
        let up = try a.sync()
        let down = try b.sync()
        #expect(
            b.read("log.txt") == "first line\nappended during the upload\n", "\(up) \(up.failures) / \(down)")
        #expect(b.conflicts("log.txt").isEmpty && a.conflicts("log.txt").isEmpty)
    }

    @Test func aRemoteThatFailsAWriteIsNamedAndTheNextPassGoesOn() throws {
        let simulated = SimulatedRemote(displayName: "sim://flaky")
        let a = try SyncDevice("a", remote: simulated, in: folder)
        try a.write("one.txt", "1")
        try a.write("two.txt", "2")
        simulated.schedule(.serverError(status: 507), on: .write, at: RemotePath("one.txt"))
        let first = try a.opened().pass()
        #expect(first.failures.count == 1)
        #expect(first.failures.first?.contains("one.txt") == true, "\(first.failures)")
        #expect(simulated.snapshot().files[RemotePath("two.txt")] == Data("2".utf8), "the others went on")
        #expect(a.read("one.txt") == "1", "nothing lost")
        let second = try a.sync()
        #expect(second.failures.isEmpty && second.uploaded == 1)
        #expect(simulated.snapshot().files[RemotePath("one.txt")] == Data("1".utf8))
    }

    // MARK: - Names

    @Test func aNameTheRemoteCannotHoldFailsNamingItAndNothingElseStops() throws {
        let picky = SimulatedRemote(displayName: "sim://picky", refusedCharacters: [":", "|"])
        let a = try SyncDevice("a", remote: picky, in: folder)
        try a.write("plan: week 1.txt", "colon\n")
        try a.write("ok.txt", "fine\n")
        for attempt in 1...2 {
            let summary = try a.opened().pass()
            #expect(summary.failures.count == 1, "pass \(attempt): \(summary.failures)")
            let failure = summary.failures.first ?? ""
            #expect(
                failure.contains("plan: week 1.txt") && failure.contains("cannot hold this name"),
                "pass \(attempt): \(failure)")
        }
        #expect(picky.snapshot().files[RemotePath("ok.txt")] == Data("fine\n".utf8))
        #expect(a.read("plan: week 1.txt") == "colon\n", "left as it was")
    }

    @Test func namesSyncCannotCarryAreLeftAloneAndSaidSo() throws {
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        let decomposed = "cafe\u{301}.txt"
        try Data("NFD\n".utf8).write(to: a.container.appendingPathComponent(decomposed))
        // A name that is not UTF-8 (Latin-1 "é"), as an old system may have left.
        let latin1 = a.container.path + "/caf\u{E9}-latin1.txt"
        let raw = Array(a.container.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8) + [0]
        let fd = raw.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: raw.count) {
                open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            }
        }
        try #require(fd >= 0, "\(latin1)")
        close(fd)
        // A name with a terminal's escape in it: a remote's listing of it would fail (and be
        // printed), so it is never uploaded either.
        try a.write("bell\u{7}\u{1B}[2J.txt", "escape\n")
        try a.write("plain.txt", "plain\n")
        let summary = try a.sync()
        #expect(summary.failures.isEmpty, "\(summary.failures)")
        let notes = summary.notes.joined(separator: "\n")
        #expect(notes.contains("not synced: its name is not in Unicode's composed form"), "\(notes)")
        #expect(notes.contains("not synced: its name is not UTF-8"), "\(notes)")
        #expect(
            notes.contains("bell\\u{7}\\u{1B}[2J.txt: not synced: its name holds a control character"),
            "\(notes)")
        #expect(!notes.contains("\u{1B}"))
        try b.sync()
        #expect(try b.tree() == ["plain.txt": "plain\n"])
        // All three are still here, untouched.
        #expect(a.read(decomposed) == "NFD\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: a.container.path).count == 4)
    }

    // MARK: - A full disk

    /// Bytes that do not compress and are not all one value, `count` of them.
    private func noise(_ count: Int) -> Data {
        var generator = SeededGenerator(seed: UInt64(count))
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    @Test func aFullRemoteDiskFailsTheUploadNamingItAndTheNextPassGoesOn() throws {
        let disk = try SmallFileSystem(at: try folder.folder("small remote"), kibibytes: 512)
        let full = LocalFolderRemote(root: disk.url)
        let a = try SyncDevice("a", remote: full, in: folder)
        try a.write("small.txt", "fits\n")
        let big = noise(1 << 20)
        try big.write(to: a.url("big.bin"))
        let first = try a.opened().pass()
        #expect(first.failures.count == 1, "\(first.failures)")
        let failure = first.failures.first ?? ""
        #expect(failure.contains("big.bin") && failure.contains("no space left"), "\(failure)")
        #expect(FileManager.default.fileExists(atPath: disk.url.appendingPathComponent("small.txt").path))
        #expect(!FileManager.default.fileExists(atPath: disk.url.appendingPathComponent("big.bin").path))
        // Nothing torn or left behind on the remote, and nothing lost here.
        let left = try FileManager.default.contentsOfDirectory(atPath: disk.url.path).filter {
            $0.contains("tmp")
        }
        #expect(left.isEmpty, "\(left)")
        #expect(try Data(contentsOf: a.url("big.bin")) == big)
        try disk.resize(kibibytes: 4096)
        let second = try a.sync()
        #expect(second.failures.isEmpty, "\(second.failures)")
        #expect(try Data(contentsOf: disk.url.appendingPathComponent("big.bin")) == big)
    }

    @Test func aFullLocalDiskFailsTheDownloadNamingItAndTheNextPassGoesOn() throws {
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        let disk = try SmallFileSystem(at: b.container, kibibytes: 512)
        try a.write("small.txt", "fits\n")
        let big = noise(1 << 20)
        try big.write(to: a.url("big.bin"))
        try a.sync()
        try b.write("mine.txt", "typed on b\n")
        let first = try b.opened().pass()
        #expect(first.failures.count == 1, "\(first.failures)")
        let failure = first.failures.first ?? ""
        #expect(failure.contains("big.bin") && failure.contains("No space left"), "\(failure)")
        #expect(b.read("small.txt") == "fits\n")
        #expect(b.read("mine.txt") == "typed on b\n")
        #expect(!b.exists("big.bin"))
        // No partial download left in the container.
        let left = try FileManager.default.contentsOfDirectory(atPath: b.container.path)
        #expect(Set(left) == ["small.txt", "mine.txt"], "\(left)")
        try disk.resize(kibibytes: 4096)
        let second = try b.sync()
        #expect(second.failures.isEmpty, "\(second.failures)")
        #expect(try Data(contentsOf: b.url("big.bin")) == big)
        #expect(a.read("mine.txt") == nil)
        try a.sync()
        #expect(a.read("mine.txt") == "typed on b\n")
    }
}
