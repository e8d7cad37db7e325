import DocumentKit
import DocumentSync
import Foundation

/// A fresh device for a sync benchmark: a container, a remote folder, its own journal and
/// version store, all under `folder`.
struct SyncBench {
    let container: URL
    let remote: URL
    let state: URL
    let store: VersionStore

    /// A device named `name`, with a remote folder of its own or the one at `sharedRemote`.
    init(in folder: URL, name: String, sharedRemote: URL? = nil) throws {
        container = folder.appendingPathComponent("\(name)/container", isDirectory: true)
        remote = sharedRemote ?? folder.appendingPathComponent("\(name)/remote", isDirectory: true)
        state = folder.appendingPathComponent("\(name)/state", isDirectory: true)
        store = VersionStore(root: folder.appendingPathComponent("\(name)/Versions", isDirectory: true))
        for url in [container, remote, state] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
    }

    /// An engine syncing the container with the remote folder, or with what `over` makes of
    /// it (a vault in it).
    func engine(over: (LocalFolderRemote) throws -> any Remote = { $0 }) throws -> SyncEngine {
        try SyncEngine(
            container: container, remote: over(LocalFolderRemote(root: remote)),
            configuration: SyncConfiguration(stateHome: state, versionStore: store, settleTime: .zero))
    }
}

/// Writes `count` documents of `size` bytes into `folder`, `perFolder` to a subfolder when
/// there are more than that.
func writeDocuments(_ count: Int, size: Int, into folder: URL, perFolder: Int = 1000) throws {
    var bytes = [UInt8](repeating: 0, count: size)
    for index in 0..<count {
        for offset in stride(from: 0, to: size, by: 64) {
            bytes[offset] = UInt8(truncatingIfNeeded: index &+ offset)
        }
        let sub = count > perFolder ? folder.appendingPathComponent("folder \(index / perFolder)") : folder
        if index % perFolder == 0 {
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        }
        try Data(bytes).write(to: sub.appendingPathComponent("document \(index).txt"))
    }
}

/// `sync.first.1000x4KiB` and `sync.first.10000x4KiB`: the first sync of `count` documents of
/// 4 KiB to a local-folder remote, against `cp -r` of the same tree, each into an empty
/// folder, alternately; the goal (issue 27) is `limit` times the copy's time.
func benchmarkFirstSync(count: Int, iterations: Int, limit: Double) throws -> BenchmarkRow {
    let folder = try scratchFolder("sync-first")
    defer { try? FileManager.default.removeItem(at: folder) }
    let source = folder.appendingPathComponent("source", isDirectory: true)
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try writeDocuments(count, size: 4096, into: source)
    var syncs: [Double] = []
    var copies: [Double] = []
    for round in 0..<iterations {
        let bench = try SyncBench(in: folder, name: "round \(round)")
        try FileManager.default.removeItem(at: bench.container)
        try FileManager.default.copyItem(at: source, to: bench.container)
        let engine = try bench.engine()
        var start = now()
        let summary = try engine.sync()
        syncs.append(now() - start)
        guard summary.uploaded == count else { throw CocoaError(.fileWriteUnknown) }
        let destination = folder.appendingPathComponent("copy \(round)", isDirectory: true)
        start = now()
        guard run("/bin/cp", ["-r", source.path, destination.path]) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
        copies.append(now() - start)
        // Nothing is removed until every round is done: on ext4 without a journal, a file made
        // near inodes freed in the last minutes costs a scan of them (`recently_deleted`), so a
        // round made after the last one's removal ran 2 to 20 times slower, the sync or the
        // copy depending on which came nearer to it. (The scratch folder goes at the end.)
    }
    let (sync, copy) = (middle(syncs), middle(copies))
    return BenchmarkRow(
        name: "sync.first.\(count)x4KiB", unit: "ms", value: sync * 1000, floor: copy * 1000,
        floorDescription: "cp -r of the same tree (\(iterations) runs)", ratio: sync / copy,
        target: "at most \(String(format: "%g", limit))x", met: sync / copy <= limit)
}

/// The median of `samples`.
func middle(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

/// `sync.nochange.10000` and `sync.onechange.10000`: a pass over 10,000 synced documents
/// with nothing changed, against a bare `readdir` + `fstatat` walk of both trees; and one with
/// one document changed, against the no-change pass.
func benchmarkSyncPasses(iterations: Int) throws -> [BenchmarkRow] {
    let folder = try scratchFolder("sync-passes")
    defer { try? FileManager.default.removeItem(at: folder) }
    let bench = try SyncBench(in: folder, name: "device")
    try writeDocuments(10_000, size: 512, into: bench.container)
    let engine = try bench.engine()
    guard try engine.sync().uploaded == 10_000 else { throw CocoaError(.fileWriteUnknown) }
    var failed = false
    let quiet = interleavedMedians(
        iterations,
        measured: {
            if (try? engine.pass().didWork) != false { failed = true }
        },
        floor: {
            if statWalk(bench.container) + statWalk(bench.remote) < 20_000 { failed = true }
        })
    var edit = 0
    let changed = interleavedMedians(
        iterations,
        measured: {
            edit += 1
            let url = bench.container.appendingPathComponent("folder 3/document 3333.txt")
            try? Data("edit \(edit)".utf8).write(to: url)
            if (try? engine.pass().uploaded) != 1 { failed = true }
        },
        floor: {
            if (try? engine.pass().didWork) != false { failed = true }
        })
    if failed { throw CocoaError(.fileReadUnknown) }
    return [
        BenchmarkRow(
            name: "sync.nochange.10000", unit: "ms", value: quiet.measured * 1000, floor: quiet.floor * 1000,
            floorDescription: "readdir + fstatat of both trees (\(iterations) runs)",
            ratio: quiet.measured / quiet.floor, target: "at most 2x", met: quiet.measured / quiet.floor <= 2),
        BenchmarkRow(
            name: "sync.onechange.10000", unit: "ms", value: changed.measured * 1000,
            floor: changed.floor * 1000,
            floorDescription: "the no-change pass (\(iterations) runs)",
            ratio: changed.measured / changed.floor,
            target: "at most 2x", met: changed.measured / changed.floor <= 2),
    ]
}

/// `sync.memory.1GiB`: the peak resident memory of a child process syncing one 1 GiB file
/// up to a local-folder remote, against the same child's peak with a 4 KiB file.
func benchmarkSyncMemory(megabytes: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("sync-memory")
    defer { try? FileManager.default.removeItem(at: folder) }
    func peak(bytes: Int, name: String) throws -> Double {
        let bench = try SyncBench(in: folder, name: name)
        try writeLargeFile(bench.container.appendingPathComponent("big.bin"), bytes: bytes)
        let child = try runSyncChild(bench)
        guard FileStatus(path: bench.remote.appendingPathComponent("big.bin").path)?.size == Int64(bytes)
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        return child.peakMiB
    }
    let small = try peak(bytes: 4096, name: "small")
    let large = try peak(bytes: megabytes << 20, name: "large")
    return BenchmarkRow(
        name: "sync.memory.\(megabytes >= 1024 ? "\(megabytes >> 10)GiB" : "\(megabytes)MiB")", unit: "MiB",
        value: large, floor: small,
        floorDescription: "the same sync of a 4 KiB file (peak RSS of the child)", ratio: large / small,
        target: "under 64 MiB", met: large < 64)
}

/// Writes a file of `bytes` bytes at `url`, a 1 MiB block over and over.
func writeLargeFile(_ url: URL, bytes: Int) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil),
        let file = FileHandle(forWritingAtPath: url.path)
    else { throw CocoaError(.fileWriteUnknown) }
    let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    var written = 0
    while written < bytes {
        let count = min(block.count, bytes - written)
        file.write(block.prefix(count))
        written += count
    }
    try file.close()
}

/// What a sync child told: its peak RSS, the sync's seconds, and for a vault the seconds its
/// unlocking took (scrypt), the RSS before it and the peak RSS right after it.
struct SyncChildReport {
    var peakMiB: Double
    var seconds: Double
    var unlockSeconds: Double?
    var unlockFromMiB: Double?
    var unlockPeakMiB: Double?
}

/// Runs the sync child (`--sync-child`) on `bench`'s container and remote folder, through the
/// vault in it when `passphrase` is given (in the child's environment, never its arguments).
func runSyncChild(_ bench: SyncBench, vaultPassphrase passphrase: String? = nil) throws -> SyncChildReport {
    var environment = ProcessInfo.processInfo.environment
    environment[syncChildPassphraseVariable] = passphrase
    let (status, output) = runCapturing(
        CommandLine.arguments[0],
        [
            "--sync-child", bench.container.path, bench.remote.path, bench.state.path, bench.store.root.path,
        ] + (passphrase == nil ? [] : ["vault"]), environment: environment)
    let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    guard status == 0, fields.count == (passphrase == nil ? 2 : 5) else {
        throw CocoaError(
            .fileWriteUnknown,
            userInfo: [NSLocalizedDescriptionKey: "the sync child failed (\(status)): \(output)"])
    }
    let unlocking = fields.count == 5
    return SyncChildReport(
        peakMiB: fields[0] / 1024, seconds: fields[1], unlockSeconds: unlocking ? fields[2] : nil,
        unlockFromMiB: unlocking ? fields[3] / 1024 : nil, unlockPeakMiB: unlocking ? fields[4] / 1024 : nil)
}

/// The environment variable a sync child through a vault takes its passphrase from.
let syncChildPassphraseVariable = "DOCBENCH_VAULT_PASSPHRASE"

/// The child of `sync.memory` and `vault.bigfile`: one sync of `container` with the folder
/// `remote` (through the vault in it when a fifth argument says `vault`), then exit. Prints
/// its peak RSS in KiB and the sync's seconds; for a vault, then the seconds the unlocking
/// took, the RSS before it and the peak RSS right after it.
func runSyncChild(_ arguments: [String]) -> Never {
    guard arguments.count == 4 || (arguments.count == 5 && arguments[4] == "vault") else { exit(2) }
    do {
        let folder = LocalFolderRemote(root: URL(fileURLWithPath: arguments[1]))
        var remote: any Remote = folder
        var unlocking = ""
        if arguments.count == 5 {
            guard let passphrase = ProcessInfo.processInfo.environment[syncChildPassphraseVariable] else {
                exit(2)
            }
            let (start, before) = (now(), statusKiB("VmRSS"))
            remote = try EncryptedRemote.open(folder, passphrase: VaultPassphrase(passphrase))
            unlocking = " \(now() - start) \(before) \(statusKiB("VmHWM"))"
        }
        let engine = try SyncEngine(
            container: URL(fileURLWithPath: arguments[0]), remote: remote,
            configuration: SyncConfiguration(
                stateHome: URL(fileURLWithPath: arguments[2]),
                versionStore: VersionStore(root: URL(fileURLWithPath: arguments[3])), settleTime: .zero))
        let start = now()
        let summary = try engine.sync()
        print("\(statusKiB("VmHWM")) \(now() - start)\(unlocking)")
        exit(summary.failures.isEmpty ? 0 : 1)
    } catch {
        FileHandle.standardError.write(Data("docbench --sync-child: \(error)\n".utf8))
        exit(1)
    }
}

/// A figure of this process's memory in KiB: its RSS now (`VmRSS`) or its own peak RSS
/// (`VmHWM`). RUSAGE_CHILDREN in the parent would be the largest of every child the run has
/// had, and even RUSAGE_SELF counts the peak of the process before it ran this program (Linux
/// keeps it across exec, and a forked child starts with the parent's pages). VmHWM is the peak
/// of this program's memory alone, in kB.
private func statusKiB(_ field: String) -> String {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let peak = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
    return String(peak?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
}

/// Runs a program and waits for it; its exit status.
private func run(_ path: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    do {
        try BenchmarkRun.start(process)
    } catch {
        return -1
    }
    BenchmarkRun.wait(for: process)
    return process.terminationStatus
}

/// Runs a program and waits for it; its exit status and standard output (its standard error
/// goes to ours, or nowhere when `quiet`).
func runCapturing(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil, quiet: Bool = false
) -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if quiet { process.standardError = FileHandle.nullDevice }
    let pipe = Pipe()
    process.standardOutput = pipe
    do {
        try BenchmarkRun.start(process)
    } catch {
        return (-1, "")
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    BenchmarkRun.wait(for: process)
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Counts the entries under `root` with one `fstatat` each: the least a scan of it costs.
private func statWalk(_ root: URL) -> Int {
    var count = 0
    var folders = [root.path]
    while let folder = folders.popLast() {
        guard let stream = opendir(folder) else { continue }
        defer { closedir(stream) }
        var info = stat()
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            guard fstatat(dirfd(stream), name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            count += 1
            if info.st_mode & S_IFMT == S_IFDIR { folders.append(folder + "/" + name) }
        }
    }
    return count
}
