import Foundation
import Testing

@testable import DocumentSync

@Suite struct SimulatedRemoteTests {
    private let a = RemotePath("a.txt")

    private func kind(of body: () throws -> Void) -> RemoteError.Kind? {
        do {
            try body()
            return nil
        } catch {
            return (error as? RemoteError)?.kind
        }
    }

    private func source(_ text: String) -> UploadSource { UploadSource(Data(text.utf8)) }

    @Test func aTimeoutAfterApplyingHappensAfterTheWrite() throws {
        let remote = SimulatedRemote()
        remote.schedule(.timeoutAfterApplying, on: .write, at: a)
        #expect(kind { try remote.write(a, from: source("mine"), condition: .absent) } == .timedOut)
        #expect(remote.snapshot().files[a] == Data("mine".utf8))
        remote.schedule(.timeoutAfterApplying, on: .delete)
        let tag = try #require(try remote.entry(at: a)?.tag)
        #expect(kind { try remote.delete(a, condition: .matches(tag)) } == .timedOut)
        #expect(remote.snapshot().files.isEmpty)
    }

    @Test func aServerErrorAppliesNothing() throws {
        let remote = SimulatedRemote()
        remote.schedule(.serverError(status: 503), on: .write)
        let error = try #require(throws: RemoteError.self) {
            try remote.write(a, from: source("x"), condition: .absent)
        }
        #expect(error.kind == .throttled(status: 503))
        #expect(error.description.contains("simulated remote") && error.description.contains("a.txt"))
        #expect(remote.snapshot() == SimulatedRemote.Snapshot())
        remote.schedule(.serverError(status: 500), on: .list)
        #expect(kind { _ = try remote.list(.root) } == .server(status: 500))
        #expect(try remote.list(.root).entries.isEmpty)
    }

    @Test func aCutConnectionGivesPartOfAReadThenThrows() throws {
        let remote = SimulatedRemote(chunkSize: 3)
        try remote.directWrite(a, Data("0123456789".utf8))
        remote.schedule(.connectionCut(afterBytes: 4), on: .read)
        var received = Data()
        #expect(kind { _ = try remote.read(a) { received.append($0) } } == .connectionLost)
        #expect(received == Data("0123".utf8))
    }

    @Test func aCutConnectionConsumesPartOfAWriteAndAppliesNothing() throws {
        let remote = SimulatedRemote()
        let tag = try remote.directWrite(a, Data("old".utf8))
        remote.schedule(.connectionCut(afterBytes: 5), on: .write)
        var consumed = 0
        let bytes = Data("abcdefghijkl".utf8)
        let whole = UploadSource(bytes, chunkSize: 3)
        let counting = UploadSource(size: whole.size) {
            let chunk = try whole.nextChunk()
            consumed += chunk?.count ?? 0
            return chunk
        }
        #expect(kind { try remote.write(a, from: counting, condition: .matches(tag)) } == .connectionLost)
        #expect(consumed == 6)
        #expect(remote.snapshot().files[a] == Data("old".utf8))
        #expect(try remote.entry(at: a)?.tag == tag)
    }

    @Test func aStaleListingShowsAnEarlierTree() throws {
        let remote = SimulatedRemote()
        try remote.write(a, from: source("a"), condition: .absent)
        try remote.write(RemotePath("b.txt"), from: source("b"), condition: .absent)
        remote.schedule(.staleListing(age: 1), on: .list)
        #expect(try remote.list(.root).entries.map(\.name) == ["a.txt"])
        remote.schedule(.staleListing(age: 2), on: .entry)
        #expect(try remote.entry(at: a) == nil)
        #expect(try remote.list(.root).entries.map(\.name) == ["a.txt", "b.txt"])
    }

    @Test func aRacingWriterMakesTheConditionFailAndWins() throws {
        let remote = SimulatedRemote()
        let tag = try #require(try remote.write(a, from: source("base"), condition: .absent))
        remote.schedule(.racingWrite(Data("theirs".utf8)), on: .write, at: a)
        #expect(
            kind { try remote.write(a, from: source("mine"), condition: .matches(tag)) }
                == .preconditionFailed)
        #expect(remote.snapshot().files[a] == Data("theirs".utf8))
        let fresh = RemotePath("new.txt")
        remote.schedule(.racingWrite(Data("first".utf8)), on: .write, at: fresh)
        #expect(
            kind { try remote.write(fresh, from: source("second"), condition: .absent) }
                == .preconditionFailed)
        #expect(remote.snapshot().files[fresh] == Data("first".utf8))
    }

    @Test func aHostileNameFailsTheListingItStrikesAndIsGoneAtTheNext() throws {
        let remote = SimulatedRemote()
        try remote.directWrite(RemotePath("A/a.txt"), Data("a".utf8))
        remote.schedule(.hostileName("x/../../hostile.txt"), on: .list, at: RemotePath("A"))
        let error = #expect(throws: RemoteError.self) { try remote.list(RemotePath("A")) }
        #expect(error?.description.contains("x/../../hostile.txt") == true)
        // A real file, served as a hostile server would serve it.
        #expect(remote.snapshot().files[RemotePath(components: ["A", "x/../../hostile.txt"])] != nil)
        #expect(try remote.list(RemotePath("A")).entries.map(\.name) == ["a.txt"])
        // One of sync's own names is left out of the listing, which goes on.
        remote.schedule(.hostileName(".documentsync-hostile.download"), on: .list)
        #expect(try remote.list(.root).entries.map(\.name) == ["A"])
        remote.removeHostileNames()
        #expect(remote.snapshot().files.keys.map(\.string) == ["A/a.txt"])
    }

    @Test func aScheduledFaultStrikesOnlyItsPathAndOnce() throws {
        let remote = SimulatedRemote()
        remote.schedule(.serverError(status: 502), on: .write, at: RemotePath("b.txt"))
        try remote.write(a, from: source("a"), condition: .absent)
        #expect(
            kind { try remote.write(RemotePath("b.txt"), from: source("b"), condition: .absent) }
                == .server(status: 502))
        try remote.write(RemotePath("b.txt"), from: source("b"), condition: .absent)
        #expect(remote.operationCounts.faults == 1)
    }

    @Test func tagsComeFromOneCounterAndAreNeverReused() throws {
        let remote = SimulatedRemote()
        var tags: [RemoteTag] = []
        tags.append(try #require(try remote.write(a, from: source("x"), condition: .absent)))
        tags.append(try #require(try remote.write(a, from: source("x"), condition: .matches(tags[0]))))
        try remote.delete(a, condition: .matches(tags[1]))
        tags.append(try #require(try remote.write(a, from: source("x"), condition: .absent)))
        #expect(Set(tags).count == 3)
        #expect(tags.allSatisfy { $0.rawValue.hasPrefix("s-") })
        let folderTag = try remote.list(.root).folderTag
        try remote.makeFolder(RemotePath("f"))
        #expect(try remote.list(.root).folderTag != folderTag)
    }

    @Test func anotherClientWritesAndSnapshotsShowTheWholeTree() throws {
        let remote = SimulatedRemote()
        try remote.directWrite(RemotePath("x/y/z.txt"), Data("z".utf8))
        try remote.directMove(RemotePath("x/y"), to: RemotePath("w"))
        #expect(
            remote.snapshot()
                == SimulatedRemote.Snapshot(
                    files: [RemotePath("w/z.txt"): Data("z".utf8)],
                    folders: [RemotePath("x"), RemotePath("w")]))
        #expect(remote.directDelete(RemotePath("x")))
        #expect(!remote.directDelete(RemotePath("x")))
        #expect(remote.operationCounts.total == 0)
    }

    @Test func countsCountCallsAndBytes() throws {
        let remote = SimulatedRemote()
        try remote.write(a, from: source("12345"), condition: .absent)
        _ = try remote.read(a) { _ in }
        _ = try remote.list(.root)
        _ = try remote.entry(at: a)
        let counts = remote.operationCounts
        #expect(counts.write == 1 && counts.read == 1 && counts.list == 1 && counts.entry == 1)
        #expect(counts.bytesWritten == 5 && counts.bytesRead == 5 && counts.total == 4)
        remote.resetOperationCounts()
        #expect(remote.operationCounts == SimulatedRemote.OperationCounts())
    }

    /// A fixed script of calls against a remote whose faults are drawn from `seed`: what each
    /// call answered, and the tree at the end.
    private func run(seed: UInt64) -> (outcomes: [String], snapshot: SimulatedRemote.Snapshot) {
        let remote = SimulatedRemote(
            faults: .init(
                serverError: 0.1, connectionCut: 0.1, racingWriter: 0.1, staleListing: 0.2,
                timeoutAfterApplying: 0.1),
            generator: SeededGenerator(seed: seed), chunkSize: 2)
        var script = SeededGenerator(seed: 99)  // the same calls every run
        var outcomes: [String] = []
        let paths = ["a", "b", "c", "d/e"].map { RemotePath($0) }
        try? remote.directMakeFolder(RemotePath("d"))
        for step in 0..<300 {
            let path = paths.randomElement(using: &script)!
            let tag = (try? remote.entry(at: path))??.tag
            let outcome: String
            do {
                switch Int.random(in: 0..<5, using: &script) {
                case 0:
                    let written = try remote.write(
                        path, from: UploadSource(Data("step \(step)".utf8)),
                        condition: tag.map { .matches($0) } ?? .absent)
                    outcome = "wrote \(written?.rawValue ?? "-")"
                case 1:
                    outcome =
                        "listed \(try remote.list(path.parent).entries.map { "\($0.name)@\($0.tag?.rawValue ?? "")" })"
                case 2:
                    var data = Data()
                    let read = try remote.read(path) { data.append($0) }
                    outcome = "read \(read) \(String(decoding: data, as: UTF8.self))"
                case 3:
                    try remote.delete(path, condition: tag.map { .matches($0) } ?? .absent)
                    outcome = "deleted"
                default:
                    let moved = try remote.move(
                        path, to: paths.randomElement(using: &script)!, condition: tag.map { .matches($0) })
                    outcome = "moved \(moved?.rawValue ?? "-")"
                }
            } catch {
                outcome = "\(error)"
            }
            outcomes.append(outcome)
        }
        return (outcomes, remote.snapshot())
    }

    @Test func theSameSeedGivesTheSameRun() {
        let first = run(seed: 5)
        let second = run(seed: 5)
        #expect(first.outcomes == second.outcomes)
        #expect(first.snapshot == second.snapshot)
        // The faults did strike, in several kinds.
        for kind in ["answered 503", "connection broke", "no answer in time", "changed since"] {
            #expect(first.outcomes.contains { $0.contains(kind) }, "no \(kind)")
        }
        #expect(run(seed: 6).outcomes != first.outcomes)
    }
}
