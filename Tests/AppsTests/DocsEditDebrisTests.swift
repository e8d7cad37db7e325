import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("docs: edit killed")
struct DocsEditDebrisTests {
    /// `docs edit` SIGKILLed at random instants, before, during or after its editor wrote the
    /// copy: the next `docs edit` leaves no copy of a dead run behind, and every edit the
    /// editor had written is a conflict version of the document, never lost.
    @Test func killedEditsLeaveNoCopiesAndNoEditIsLost() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "the document\n")
        let editing = folder.dataHome.appendingPathComponent("Simple Text Editor/Editing")
        var random = SystemRandomNumberGenerator()
        var copiesLeft = 0
        for trial in 0..<12 {
            var environment = folder.environment
            // Writes the copy at once, then lingers, as a person in an editor would.
            environment["EDITOR"] = DocsEditTests.editor("printf \"edit \(trial)\" > \"$1\"; sleep 1")
            // Spawned and reaped directly: Foundation's Process waits for the editor too.
            let arguments: [String] = [DocsBinary.url.path, "edit", "Notes"]
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] =
                environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            var pid: pid_t = 0
            #expect(posix_spawn(&pid, DocsBinary.url.path, nil, nil, argv, envp) == 0)
            usleep(UInt32.random(in: 30_000...400_000, using: &random))
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            copiesLeft += ((try? FileManager.default.contentsOfDirectory(atPath: editing.path)) ?? []).count
        }
        #expect(copiesLeft > 0, "no kill landed while an edit was under way: the test proved nothing")

        // The next edit (one that changes nothing) sweeps.
        let next = try folder.run(["edit", "Notes"], environment: ["EDITOR": "true"])
        #expect(next.status == 0, "\(next.error)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: editing.path)) ?? []
        #expect(left.isEmpty, "\(left)")
        #expect(try folder.contents("Notes.txt") == "the document\n", "no edit was saved over it")

        let store = VersionStore(root: folder.dataHome.appendingPathComponent("DocumentKit/Versions"))
        let kept = store.unresolvedConflictVersionsOfItem(at: folder.url("Notes.txt")).compactMap {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
        #expect(kept.allSatisfy { $0.hasPrefix("edit ") }, "\(kept)")
        #expect(!kept.isEmpty, "the editors wrote edits that docs never saved back; they must be kept")
    }
}
