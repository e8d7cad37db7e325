/// One benchmark of the suite: what `--filter` selects and `--help` lists.
struct Benchmark {
    /// The name `--filter` matches, with the names of its rows.
    var name: String
    /// The rows it prints, by name, in order.
    var rows: [String]
    /// What it measures against what, in a few words, for `--help`.
    var summary: String
    var run: @MainActor () async throws -> [BenchmarkRow]

    /// Whether `--filter pattern` selects it: its name or one of its rows contains `pattern`.
    func matches(_ pattern: String) -> Bool {
        name.contains(pattern) || rows.contains { $0.contains(pattern) }
    }
}

/// The whole suite, in the order it runs; `quick` takes fewer samples (and a smaller file for
/// `sync.memory`).
func catalog(quick: Bool) -> [Benchmark] {
    let memoryMiB = quick ? 256 : 1024
    return [
        Benchmark(
            name: "undo.register", rows: ["undo.register", "undo.register.per-registration"],
            summary: "UndoManager registrations and undos against an array of closures",
            run: { benchmarkUndoRegistration(registrations: 1_000_000) }),
        Benchmark(
            name: "save.data.1MiB", rows: ["save.data.1MiB"],
            summary: "SafeSave of 1 MiB against write, fsync, rename and a folder fsync",
            run: { [try benchmarkSafeSave(iterations: quick ? 10 : 60)] }),
        Benchmark(
            name: "save.package.1000x4KiB.1changed", rows: ["save.package.1000x4KiB.1changed"],
            summary: "saving a package of 1,000 files with one changed against writing it all anew",
            run: { [try benchmarkPackageSave(iterations: quick ? 3 : 9)] }),
        Benchmark(
            name: "document.save.1MiB", rows: ["document.save.1MiB"],
            summary: "a document's save of 1 MiB against write, fsync, rename and a folder fsync",
            run: { [try await benchmarkDocumentSave(iterations: quick ? 10 : 60)] }),
        Benchmark(
            name: "document.open.100MiB", rows: ["document.open.100MiB"],
            summary: "opening a 100 MiB document against open, fstat and a read into Data",
            run: { [try await benchmarkDocumentOpen(iterations: quick ? 3 : 7)] }),
        Benchmark(
            name: "autosave.burst", rows: ["autosave.burst"],
            summary: "saves an autosaving document makes in a burst of edits against one per edit",
            run: { [try await benchmarkAutosaveBurst()] }),
        Benchmark(
            name: "coordinate.write.4KiB", rows: ["coordinate.write.4KiB"],
            summary: "a coordinated safe save of 4 KiB against the same save uncoordinated",
            run: { [try benchmarkCoordinatedWrite(iterations: quick ? 50 : 300)] }),
        Benchmark(
            name: "coordinate.read.uncontended", rows: ["coordinate.read.uncontended"],
            summary: "coordinated reads per second of a file nobody else uses against plain reads",
            run: { [try benchmarkCoordinatedRead(duration: quick ? 1 : 3)] }),
        // Off the main actor: it blocks on semaphores, and presenters of open documents hop there.
        Benchmark(
            name: "presenter.notify.latency",
            rows: ["presenter.notify.latency", "presenter.notify.latency.uncoordinated"],
            summary: "a presenter hearing another process's write against bare inotify",
            run: {
                try await Task.detached { try benchmarkPresenterLatency(samples: quick ? 20 : 100) }.value
            }),
        // On the main actor: the document and the typing that keeps it busy live there.
        Benchmark(
            name: "presenter.save.latency",
            rows: ["presenter.save.latency.median", "presenter.save.latency.p99"],
            summary: "an open document, typed into, taking in another process's write",
            run: { try await benchmarkPresenterSaveLatency(samples: quick ? 30 : 200) }),
        Benchmark(
            name: "diff.lines.100k", rows: ["diff.lines.100k.scattered", "diff.lines.100k.unrelated"],
            summary: "the conflict screen's line diff of 100,000 lines against GNU diff",
            run: {
                [
                    try benchmarkLineDiff(iterations: quick ? 3 : 9, unrelated: false),
                    try benchmarkLineDiff(iterations: quick ? 3 : 9, unrelated: true),
                ]
            }),
        Benchmark(
            name: "merge.marked.100k", rows: ["merge.marked.100k"],
            summary: "a marked three-way merge of 100,000 lines against GNU diff3 -m",
            run: { [try benchmarkMarkedMerge(iterations: quick ? 3 : 9)] }),
        Benchmark(
            name: "hash.sha256.100MiB", rows: ["hash.sha256.100MiB"],
            summary: "the content hash of 100 MiB against sha256sum",
            run: { [try benchmarkContentHash(iterations: quick ? 3 : 7)] }),
        Benchmark(
            name: "versions.save.1MiB.100x",
            rows: [
                "versions.save.1MiB.100x", "versions.store.after.listings", "versions.save.1MiB.100x.time",
            ],
            summary: "100 versioned saves of 1 MiB: disk used against full copies, time against plain saves",
            run: { try await benchmarkVersionSaves(saves: quick ? 20 : 100) }),
        Benchmark(
            name: "versions.store.open.swept", rows: ["versions.store.open.swept"],
            summary: "the first write to a store left with 1,000 orphans to sweep against an empty one",
            run: { [try benchmarkStoreSweep(iterations: quick ? 3 : 9)] }),
        Benchmark(
            name: "sync.first.1000x4KiB", rows: ["sync.first.1000x4KiB"],
            summary: "first sync of 1,000 x 4 KiB to a local folder against cp -r (goal 3x)",
            run: { [try benchmarkFirstSync(count: 1000, iterations: quick ? 1 : 5, limit: 3)] }),
        Benchmark(
            name: "sync.first.10000x4KiB", rows: ["sync.first.10000x4KiB"],
            summary: "first sync of 10,000 x 4 KiB to a local folder against cp -r (goal 5x)",
            run: { [try benchmarkFirstSync(count: 10_000, iterations: quick ? 1 : 3, limit: 5)] }),
        Benchmark(
            name: "sync.passes.10000", rows: ["sync.nochange.10000", "sync.onechange.10000"],
            summary: "a pass over 10,000 synced documents against a stat walk of both trees (goal 2x),"
                + " and one with a change against it (goal 2x)",
            run: { try benchmarkSyncPasses(iterations: quick ? 3 : 9) }),
        Benchmark(
            name: "sync.memory",
            rows: [memoryMiB >= 1024 ? "sync.memory.1GiB" : "sync.memory.\(memoryMiB)MiB"],
            summary:
                "peak RSS of a child syncing one \(memoryMiB) MiB file against a 4 KiB one (goal under 64 MiB)",
            run: { [try benchmarkSyncMemory(megabytes: memoryMiB)] }),
        Benchmark(
            name: "vault.first.1000x4KiB", rows: ["vault.first.1000x4KiB"],
            summary: "first sync of 1,000 x 4 KiB through a vault against the same unencrypted (goal 1.3x)",
            run: { [try benchmarkVaultFirstSync(count: 1000, iterations: quick ? 1 : 5)] }),
        Benchmark(
            name: "vault.bigfile",
            rows: ["upload", "download", "memory"].map {
                "vault.\($0).\(memoryMiB >= 1024 ? "1GiB" : "\(memoryMiB)MiB")"
            },
            summary:
                "a \(memoryMiB) MiB file synced up and down through a vault against the same unencrypted"
                + " (goals 1.3x, peak RSS under 64 MiB)",
            run: { try benchmarkVaultBigFile(megabytes: memoryMiB) }),
        Benchmark(
            name: "vault.chunks", rows: ["vault.seal.32KiB", "vault.open.32KiB"],
            summary: "the vault's chunk encryption and decryption against openssl speed -evp aes-256-gcm",
            run: { try benchmarkVaultThroughput(megabytes: quick ? 64 : 256, iterations: quick ? 1 : 3) }),
        Benchmark(
            name: "resourcevalues.ubiquitous.10000", rows: ["resourcevalues.ubiquitous.10000"],
            summary:
                "the ubiquitous resource values of 10,000 synced documents against Foundation's file size",
            run: { [try benchmarkUbiquitousResourceValues(items: 10_000, iterations: quick ? 3 : 9)] }),
        Benchmark(
            name: "query", rows: ["query.gather.10000", "query.update.latency"],
            summary: "a metadata query gathering 10,000 items, and hearing an update against inotify",
            run: {
                [try benchmarkQueryGather(items: 10_000, iterations: quick ? 3 : 15)]
                    + (try benchmarkQueryUpdateLatency(samples: quick ? 20 : 50))
            }),
    ]
}
