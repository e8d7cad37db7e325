import DocumentKit
import DocumentSync
import Foundation

// Issue 30's figures, each beside the same work unencrypted in the same run: a sync through a
// vault (EncryptedRemote over a local folder) against the same sync to the plain folder, and
// our chunk encryption against `openssl speed` of the same chunk size. scripts/vault-bench
// measures the same through the `docs` command, process and all.

/// The passphrase of the benchmarks' vaults: a throwaway, not a secret, handed to a child
/// through its environment as `docs` takes one.
private let benchPassphrase = "docbench: a vault nobody needs to open again"

/// `vault.first.1000x4KiB`: the first sync of `count` documents of 4 KiB (100 to a folder, as
/// scripts/local-bench lays them out) through a vault in an empty local folder, against the
/// same first sync to an empty plain folder, alternately, each with a fresh journal; the goal
/// (issue 30) is 1.3 times the plain sync's time. The vault is made before the clock starts
/// (its scrypt is `vault.unlock`'s figure, in `vault.bigfile`).
func benchmarkVaultFirstSync(count: Int, iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("vault-first")
    defer { try? FileManager.default.removeItem(at: folder) }
    let source = folder.appendingPathComponent("source", isDirectory: true)
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try writeDocuments(count, size: 4096, into: source, perFolder: 100)
    let passphrase = VaultPassphrase(benchPassphrase)
    var encrypted: [Double] = []
    var plain: [Double] = []
    var cpu: [Bool: [Double]] = [:]
    func firstSync(_ name: String, vault: Bool) throws -> Double {
        let bench = try SyncBench(in: folder, name: name)
        try FileManager.default.removeItem(at: bench.container)
        try FileManager.default.copyItem(at: source, to: bench.container)
        let engine = try bench.engine { remote in
            vault ? try EncryptedRemote.create(over: remote, passphrase: passphrase) : remote as any Remote
        }
        let (start, cpuStart) = (now(), processCPUSeconds())
        let summary = try engine.sync()
        let seconds = now() - start
        cpu[vault, default: []].append(processCPUSeconds() - cpuStart)
        guard summary.uploaded == count, summary.failures.isEmpty else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey: "\(name): \(summary.uploaded) uploaded, \(summary.failures)"
                ])
        }
        return seconds
    }
    for round in 0..<iterations {
        // Each goes first every other round: neither always meets the caches the other warmed.
        if round % 2 == 0 {
            encrypted.append(try firstSync("vault \(round)", vault: true))
            plain.append(try firstSync("plain \(round)", vault: false))
        } else {
            plain.append(try firstSync("plain \(round)", vault: false))
            encrypted.append(try firstSync("vault \(round)", vault: true))
        }
        // Nothing is removed until the end: sync.first says why (ext4's recently freed inodes).
    }
    let (value, floor) = (middle(encrypted), middle(plain))
    return BenchmarkRow(
        name: "vault.first.\(count)x4KiB", unit: "ms", value: value * 1000, floor: floor * 1000,
        floorDescription: String(
            format: "the same first sync to a plain folder (%d runs each; CPU %.0f ms against %.0f ms)",
            iterations, middle(cpu[true] ?? [0]) * 1000, middle(cpu[false] ?? [0]) * 1000),
        ratio: value / floor, target: "at most 1.3x", met: value / floor <= 1.3)
}

/// The CPU time (user and system) this process's threads have spent so far, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// `vault.upload.1GiB`, `vault.download.1GiB`, `vault.memory.1GiB`: a child process's first
/// sync of one file of `megabytes` MiB up through a vault in a local folder, and a second
/// device's first sync down from it, against the same two syncs with a plain folder; the sync's
/// own time (the goal: 1.3 times the plain one's) and the child's peak RSS, unlocking the vault
/// (scrypt, 32 MiB) included (the goal: under 64 MiB).
func benchmarkVaultBigFile(megabytes: Int) throws -> [BenchmarkRow] {
    let folder = try scratchFolder("vault-bigfile")
    defer { try? FileManager.default.removeItem(at: folder) }
    let bytes = megabytes << 20
    let name = megabytes >= 1024 && megabytes % 1024 == 0 ? "\(megabytes >> 10)GiB" : "\(megabytes)MiB"
    let passphrase = VaultPassphrase(benchPassphrase)
    // Index 0 plain, 1 through a vault.
    let senders = try ["plain", "vault"].map { try SyncBench(in: folder, name: "\($0) up") }
    let receivers = try zip(["plain", "vault"], senders).map {
        try SyncBench(in: folder, name: "\($0) down", sharedRemote: $1.remote)
    }
    for sender in senders {
        try writeLargeFile(sender.container.appendingPathComponent("big.bin"), bytes: bytes)
    }
    _ = try EncryptedRemote.create(over: LocalFolderRemote(root: senders[1].remote), passphrase: passphrase)
    // Each sync starts with nothing waiting to be written back (the files just made, the last
    // sync's): neither pays for the other's writes. The plain and the encrypted sync one after
    // the other, up, then down.
    let passphrases = [nil, benchPassphrase]
    var up: [SyncChildReport] = []
    for (sender, given) in zip(senders, passphrases) {
        Glibc.sync()
        up.append(try runSyncChild(sender, vaultPassphrase: given))
    }
    var down: [SyncChildReport] = []
    for (index, receiver) in receivers.enumerated() {
        Glibc.sync()
        down.append(try runSyncChild(receiver, vaultPassphrase: passphrases[index]))
        let original = senders[index].container.appendingPathComponent("big.bin")
        let copy = receiver.container.appendingPathComponent("big.bin")
        guard FileStatus(path: copy.path)?.size == Int64(bytes), try sameBytes(original, copy) else {
            throw CocoaError(
                .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "download \(index) differs"])
        }
    }
    let (plainUp, vaultUp, plainDown, vaultDown) = (up[0], up[1], down[0], down[1])
    let peak = max(vaultUp.peakMiB, vaultDown.peakMiB)
    let unlock = String(
        format: "unlocking took %.0f ms from %.1f MiB, peaking at %.1f MiB; plain peaks %.1f up, %.1f down",
        (vaultUp.unlockSeconds ?? 0) * 1000, vaultUp.unlockFromMiB ?? 0,
        max(vaultUp.unlockPeakMiB ?? 0, vaultDown.unlockPeakMiB ?? 0), plainUp.peakMiB, plainDown.peakMiB)
    return [
        BenchmarkRow(
            name: "vault.upload.\(name)", unit: "s", value: vaultUp.seconds, floor: plainUp.seconds,
            floorDescription: "the same first sync up to a plain folder (1 run each, a child each)",
            ratio: vaultUp.seconds / plainUp.seconds, target: "at most 1.3x",
            met: vaultUp.seconds / plainUp.seconds <= 1.3),
        BenchmarkRow(
            name: "vault.download.\(name)", unit: "s", value: vaultDown.seconds, floor: plainDown.seconds,
            floorDescription: "the same first sync down from a plain folder (1 run each, a child each)",
            ratio: vaultDown.seconds / plainDown.seconds, target: "at most 1.3x",
            met: vaultDown.seconds / plainDown.seconds <= 1.3),
        BenchmarkRow(
            name: "vault.memory.\(name)", unit: "MiB", value: peak,
            floor: max(plainUp.peakMiB, plainDown.peakMiB),
            floorDescription: "the plain syncs' peak RSS (\(unlock))",
            ratio: peak / max(plainUp.peakMiB, plainDown.peakMiB), target: "under 64 MiB", met: peak < 64),
    ]
}

/// `vault.seal.32KiB` and `vault.open.32KiB`: our content encryption (VaultContentEncryptor: a
/// nonce from RAND_bytes, AES-256-GCM with the chunk number and header nonce authenticated, the
/// chunk handed on) and decryption of `megabytes` MiB in memory, in MB/s of CPU time, against
/// `openssl speed -evp aes-256-gcm -bytes 32768` (and `-decrypt`): libcrypto's own loop over
/// chunks of the same size, which counts its CPU time too. Interleaved, medians of
/// `iterations`.
func benchmarkVaultThroughput(megabytes: Int, iterations: Int) throws -> [BenchmarkRow] {
    let keys = try VaultMasterKeys.random()
    let plaintext = UnsafeMutableRawBufferPointer.allocate(byteCount: megabytes << 20, alignment: 64)
    defer { plaintext.deallocate() }
    try SecureRandom.fill(plaintext)
    let storedCount = Int(VaultContent.ciphertextCount(plaintextCount: Int64(plaintext.count)))
    let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: storedCount, alignment: 64)
    defer { stored.deallocate() }
    let opened = UnsafeMutableRawBufferPointer.allocate(byteCount: plaintext.count, alignment: 64)
    defer { opened.deallocate() }

    // Each chunk copied where a sink would put it (an upload's buffer, a download's file).
    func seal() throws {
        let encryptor = try VaultContentEncryptor(keys: keys)
        var offset = 0
        func put(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: stored[offset..<offset + bytes.count]).copyMemory(
                from: bytes)
            offset += bytes.count
        }
        encryptor.header.withUnsafeBytes { put($0) }
        try encryptor.update(UnsafeRawBufferPointer(plaintext), to: put)
        try encryptor.finish(to: put)
    }
    func open() throws {
        let decryptor = VaultContentDecryptor(keys: keys, file: "benchmark")
        var offset = 0
        func put(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: opened[offset..<offset + bytes.count]).copyMemory(
                from: bytes)
            offset += bytes.count
        }
        try decryptor.update(UnsafeRawBufferPointer(stored), to: put)
        try decryptor.finish(to: put)
    }
    try seal()
    try open()
    guard opened.elementsEqual(plaintext) else {
        throw CocoaError(
            .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "decrypted bytes differ"])
    }
    var rows: [BenchmarkRow] = []
    for (name, decrypting, body) in [("vault.seal.32KiB", false, seal), ("vault.open.32KiB", true, open)] {
        var ours: [Double] = []
        var theirs: [Double] = []
        for _ in 0..<iterations {
            // CPU time, as openssl speed counts its own: a busy neighbour slows neither figure.
            let start = threadCPUSeconds()
            try body()
            ours.append(Double(plaintext.count) / (threadCPUSeconds() - start) / 1e6)
            theirs.append(try opensslSpeed(decrypting: decrypting))
        }
        let (value, floor) = (middle(ours), middle(theirs))
        rows.append(
            BenchmarkRow(
                name: name, unit: "MB/s", value: value, floor: floor,
                floorDescription:
                    "openssl speed -evp aes-256-gcm -bytes 32768\(decrypting ? " -decrypt" : "") (\(iterations) runs each)",
                ratio: floor / value, target: "within 1.3x of openssl", met: floor / value <= 1.3))
    }
    return rows
}

/// The CPU time this thread has spent so far, in seconds.
private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// What `openssl speed` reports for AES-256-GCM over 32 KiB blocks for a second of its CPU
/// time, in MB/s.
private func opensslSpeed(decrypting: Bool) throws -> Double {
    let (status, output) = runCapturing(
        "/usr/bin/openssl",
        ["speed"] + (decrypting ? ["-decrypt"] : []) + [
            "-evp", "aes-256-gcm", "-bytes", "32768", "-seconds", "1",
        ])
    // The last line: "AES-256-GCM    1922378.19k", in thousands of bytes a second.
    guard status == 0,
        let line = output.split(separator: "\n").last(where: { $0.uppercased().hasPrefix("AES-256-GCM") }),
        let figure = line.split(separator: " ").last, figure.hasSuffix("k"),
        let thousands = Double(figure.dropLast())
    else {
        throw CocoaError(
            .executableLoad,
            userInfo: [NSLocalizedDescriptionKey: "openssl speed said: \(output.suffix(300))"])
    }
    return thousands / 1000
}

/// Whether the two files hold the same bytes.
private func sameBytes(_ a: URL, _ b: URL) throws -> Bool {
    let first = try FileHandle(forReadingFrom: a)
    let second = try FileHandle(forReadingFrom: b)
    defer {
        try? first.close()
        try? second.close()
    }
    while true {
        let x = try first.read(upToCount: 4 << 20) ?? Data()
        let y = try second.read(upToCount: 4 << 20) ?? Data()
        if x != y { return false }
        if x.isEmpty { return true }
    }
}
