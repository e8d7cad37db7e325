import DocumentKit
import Foundation

// swift run -c release docbench [--json] [--filter NAME] [--quick]
// Every row is measured beside its floor or peer in the same run; ratios above 1 are slower.
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--child-writer", let path = arguments.dropFirst().first {
    runChildWriter(path: path)
}
if arguments.first == "--sync-child" {
    runSyncChild(Array(arguments.dropFirst()))
}
let json = arguments.contains("--json")
let quick = arguments.contains("--quick")
let filter = arguments.firstIndex(of: "--filter").flatMap { index in
    arguments.index(after: index) < arguments.endIndex ? arguments[arguments.index(after: index)] : nil
}

let benchmarks: [(String, @MainActor () async throws -> [BenchmarkRow])] = [
    ("undo.register", { benchmarkUndoRegistration(registrations: 1_000_000) }),
    ("save.data.1MiB", { [try benchmarkSafeSave(iterations: quick ? 10 : 60)] }),
    ("save.package.1000x4KiB.1changed", { [try benchmarkPackageSave(iterations: quick ? 3 : 9)] }),
    ("document.save.1MiB", { [try await benchmarkDocumentSave(iterations: quick ? 10 : 60)] }),
    ("document.open.100MiB", { [try await benchmarkDocumentOpen(iterations: quick ? 3 : 7)] }),
    ("autosave.burst", { [try await benchmarkAutosaveBurst()] }),
    ("coordinate.write.4KiB", { [try benchmarkCoordinatedWrite(iterations: quick ? 50 : 300)] }),
    ("coordinate.read.uncontended", { [try benchmarkCoordinatedRead(duration: quick ? 1 : 3)] }),
    // Off the main actor: it blocks on semaphores, and presenters of open documents hop there.
    (
        "presenter.notify.latency",
        { try await Task.detached { try benchmarkPresenterLatency(samples: quick ? 20 : 100) }.value }
    ),
    // On the main actor: the document and the typing that keeps it busy live there.
    ("presenter.save.latency", { try await benchmarkPresenterSaveLatency(samples: quick ? 30 : 200) }),
    ("hash.sha256.100MiB", { [try benchmarkContentHash(iterations: quick ? 3 : 7)] }),
    ("versions.save.1MiB.100x", { try await benchmarkVersionSaves(saves: quick ? 20 : 100) }),
    ("versions.store.open.swept", { [try benchmarkStoreSweep(iterations: quick ? 3 : 9)] }),
    ("sync.first.1000x4KiB", { [try benchmarkFirstSync(iterations: quick ? 1 : 5)] }),
    ("sync.passes.10000", { try benchmarkSyncPasses(iterations: quick ? 3 : 9) }),
    ("sync.memory.1GiB", { [try benchmarkSyncMemory(megabytes: quick ? 256 : 1024)] }),
    (
        "query",
        {
            [try benchmarkQueryGather(items: 10_000, iterations: quick ? 3 : 15)]
                + (try benchmarkQueryUpdateLatency(samples: quick ? 20 : 50))
        }
    ),
]

var rows: [BenchmarkRow] = []
var failed = false
for (name, run) in benchmarks where filter.map({ name.contains($0) }) ?? true {
    do {
        rows.append(contentsOf: try await run())
    } catch {
        FileHandle.standardError.write(Data("docbench: \(name) failed: \(error)\n".utf8))
        failed = true
    }
}
if json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(rows), as: UTF8.self))
} else {
    printTable(rows)
}
exit(failed ? 1 : 0)
