import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// Passes whose batches run on threads, many actions at once (``ExecutionOrder/concurrent``),
/// as every real sync does: the simulation takes turns instead, so that its seeds replay;
/// here the threads really race, on the local-folder remote and the simulated one.
@Suite struct SyncConcurrencyTests {
    enum Kind: String, CaseIterable, Sendable { case localFolder, simulated }

    /// Two devices on one remote of `kind`, each engine running its batches on threads.
    private func devices(_ kind: Kind, in folder: TemporaryFolder) throws -> (SyncDevice, SyncDevice) {
        let remote: any Remote =
            switch kind {
            case .localFolder: LocalFolderRemote(root: try folder.folder("remote"))
            case .simulated: SimulatedRemote(displayName: "simulated remote")
            }
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        for device in [a, b] { try device.opened().executionOrder = .concurrent }
        return (a, b)
    }

    @Test(arguments: Kind.allCases)
    func manyDocumentsGoUpAtOnceAndArriveWholeOnAnotherDevice(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (a, b) = try devices(kind, in: folder)
        var expected: [String: String] = [:]
        for index in 0..<240 {
            let path = "F\(index % 6)/doc\(index).txt"
            expected[path] = "document \(index)\n" + String(repeating: "line \(index)\n", count: index % 50)
            try a.write(path, expected[path]!)
        }
        let up = try a.sync()
        #expect(up.uploaded == 240 && up.failures.isEmpty, "\(up.failures.prefix(3))")
        let down = try b.sync()
        #expect(down.downloaded == 240 && down.failures.isEmpty, "\(down.failures.prefix(3))")
        #expect(try b.tree() == expected)
        #expect(try !a.sync().didWork)
        #expect(try !b.sync().didWork)
    }

    /// A batch larger than a pass runs at once (``SyncEngine/actionsHeldAtOnce``) runs a part
    /// after another: every action runs, once, uploads and downloads alike.
    @Test(arguments: Kind.allCases)
    func aBatchLargerThanAPassRunsAtOnceRunsAPartAfterAnother(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (a, b) = try devices(kind, in: folder)
        try a.opened().actionsHeldAtOnce = 7
        try b.opened().actionsHeldAtOnce = 5
        var expected: [String: String] = [:]
        for index in 0..<60 {
            let path = "F\(index % 3)/doc\(index).txt"
            expected[path] = "document \(index)\n"
            try a.write(path, expected[path]!)
        }
        let up = try a.sync()
        #expect(up.uploaded == 60 && up.foldersMade == 3 && up.failures.isEmpty, "\(up.failures.prefix(3))")
        let down = try b.sync()
        #expect(down.downloaded == 60 && down.failures.isEmpty, "\(down.failures.prefix(3))")
        #expect(try b.tree() == expected)
        #expect(try !a.sync().didWork)
        #expect(try !b.sync().didWork)
    }

    /// Uploads keep their merge bases a group at a time as they finish
    /// (``SyncEngine/basesKeptTogether``), from the batch's threads, so that a pass does not
    /// hold them all: every uploaded document has its base, and edits made on both devices
    /// afterwards merge with it.
    @Test(arguments: Kind.allCases)
    func mergeBasesAreKeptAGroupAtATimeWhileUploadsRun(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (a, b) = try devices(kind, in: folder)
        try a.opened().basesKeptTogether = 7
        for index in 0..<100 { try a.write("doc\(index).txt", "first \(index)\nsecond\nthird\n") }
        let up = try a.sync()
        #expect(up.uploaded == 100 && up.failures.isEmpty, "\(up.failures.prefix(3))")
        let items = try a.opened().journal.itemsByPath().values.filter { $0.kind == .file }
        #expect(items.count == 100)
        #expect(
            items.filter { $0.baseVersion == nil }.isEmpty,
            "\(items.filter { $0.baseVersion == nil }.count) without a base")
        try b.sync()
        for index in 0..<100 {
            try a.write("doc\(index).txt", "first \(index) from a\nsecond\nthird\n")
            try b.write("doc\(index).txt", "first \(index)\nsecond\nthird from b\n")
        }
        try a.sync()
        try b.sync()
        try a.sync()
        let (treeA, treeB) = (try a.tree(), try b.tree())
        #expect(treeA == treeB)
        for index in 0..<100 {
            #expect(treeA["doc\(index).txt"] == "first \(index) from a\nsecond\nthird from b\n")
        }
    }

    @Test(arguments: Kind.allCases)
    func editsAndDeletionsOnBothDevicesConvergeWithNothingLost(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (a, b) = try devices(kind, in: folder)
        for index in 0..<120 { try a.write("F\(index % 4)/doc\(index).txt", "base \(index)\n") }
        try a.sync()
        try b.sync()
        // a edits the even documents, b edits every third one (both edit every sixth: merged
        // or a conflict, never lost), b deletes some a did not touch.
        for index in stride(from: 0, to: 120, by: 2) {
            try a.write("F\(index % 4)/doc\(index).txt", "base \(index)\nedit from a\n")
        }
        for index in stride(from: 0, to: 120, by: 3) {
            try b.write("F\(index % 4)/doc\(index).txt", "edit from b\nbase \(index)\n")
        }
        for index in [1, 7, 13, 19] { try b.delete("F\(index % 4)/doc\(index).txt") }
        try a.sync()
        try b.sync()
        try a.sync()
        try b.sync()
        let (treeA, treeB) = (try a.tree(), try b.tree())
        #expect(treeA == treeB)
        for index in 0..<120 where ![1, 7, 13, 19].contains(index) {
            let path = "F\(index % 4)/doc\(index).txt"
            // Every edit is in the document or in a conflict version of it.
            let texts = [treeA[path] ?? ""] + a.conflicts(path)
            if index % 2 == 0 { #expect(texts.contains { $0.contains("edit from a") }, "\(path): \(texts)") }
            if index % 3 == 0 { #expect(texts.contains { $0.contains("edit from b") }, "\(path): \(texts)") }
        }
        for index in [1, 7, 13, 19] { #expect(treeA["F\(index % 4)/doc\(index).txt"] == nil) }
    }

    /// A batch of uploads and downloads four at a time, taking turns in the order a seed
    /// draws, crashed at its Nth checkpoint for every N: between any two steps of any two
    /// actions. Every crash converges after the next passes, with both devices holding every
    /// document, byte for byte.
    @Test(arguments: [UInt64(1), 2, 3])
    func aCrashBetweenAnyTwoCompletionsOfABatchLosesNothing(seed: UInt64) throws {
        var crashAt = 1
        while true {
            let folder = try TemporaryFolder()
            let remote = SimulatedRemote(displayName: "simulated remote")
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            var expected: [String: String] = [:]
            for index in 0..<6 {
                expected["F/doc\(index).txt"] = "a's document \(index)\n"
                try a.write("F/doc\(index).txt", expected["F/doc\(index).txt"]!)
            }
            try a.sync()
            try b.sync()
            // Now both sides change at once: a edits three, b adds three; a's pass uploads and
            // downloads in one batch.
            for index in 0..<3 {
                expected["F/doc\(index).txt"] = "a's edit \(index)\n"
                try a.write("F/doc\(index).txt", expected["F/doc\(index).txt"]!)
                expected["F/new\(index).txt"] = "b's new \(index)\n"
                try b.write("F/new\(index).txt", expected["F/new\(index).txt"]!)
            }
            try b.sync()
            // In a scope of its own: the engine dropped at the crash must not live on here.
            let crashed = try {
                let engine = try a.opened()
                engine.executionOrder = .interleaved(seed: seed, workers: 4)
                var reached = 0
                engine.checkpoint = { _ in
                    reached += 1
                    if reached == crashAt { throw SyncInterruption() }
                }
                do {
                    try engine.pass()
                    return false
                } catch is SyncInterruption {
                    return true
                }
            }()
            a.crash()
            for _ in 0..<3 {
                try a.sync()
                try b.sync()
            }
            #expect(try a.tree() == expected, "seed \(seed), crash at checkpoint \(crashAt)")
            #expect(try b.tree() == expected, "seed \(seed), crash at checkpoint \(crashAt)")
            guard crashed else { break }
            crashAt += 1
        }
        #expect(crashAt > 12, "the pass had only \(crashAt) checkpoints")
    }
}
