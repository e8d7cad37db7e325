import DocumentKit
import Foundation

/// `versions.save.1MiB.100x`: 100 saves of a 1 MiB document with one line changed each; the
/// disk the version store uses against 100 full copies (target: at most a fifth), and the
/// time per save with versions (until the store has them all) against the same document
/// without, measured in alternating rounds so that a busy neighbour slows both alike.
@MainActor func benchmarkVersionSaves(saves: Int) async throws -> [BenchmarkRow] {
    let folder = try scratchFolder("versions-save")
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = VersionStore(root: folder.appendingPathComponent("store/Versions", isDirectory: true))
    let size = 1 << 20

    // Text-like lines, so "one line changed" means what it says.
    var base = Data()
    var line = 0
    while base.count < size {
        base.append(
            contentsOf: "line \(line): the quick brown fox jumps over the lazy dog \(line &* 7919)\n".utf8)
        line += 1
    }
    base = base.prefix(size)
    let lineLength = 64

    func open(_ name: String, versioned: Bool) async throws -> BytesDocument {
        let url = folder.appendingPathComponent(name)
        let document = BytesDocument(fileURL: url)
        document.versionStore = versioned ? store : nil
        document.autosaveConfiguration.isEnabled = false
        document.bytes = base
        guard await document.save(to: url, for: .forCreating) else { throw CocoaError(.fileWriteUnknown) }
        return document
    }

    /// `count` saves, each of one line changed, and the time until the store has their versions.
    func run(_ document: BytesDocument, saves count: Int, from first: Int) async throws -> (
        samples: [Double], total: Double
    ) {
        let url = document.fileURL
        var samples: [Double] = []
        var generator = SystemRandomNumberGenerator()
        let start = now()
        for index in first..<first + count {
            let offset = Int.random(in: 0..<(size / lineLength - 1), using: &generator) * lineLength
            let replacement = Data("edit \(index) at \(offset)".utf8.prefix(lineLength - 1))
            document.bytes.replaceSubrange(offset..<offset + replacement.count, with: replacement)
            document.updateChangeCount(.done)
            let began = now()
            guard await document.save(to: url, for: .forOverwriting) else {
                throw CocoaError(.fileWriteUnknown)
            }
            samples.append(now() - began)
        }
        if document.versionStore != nil { store.waitUntilIdle() }
        return (samples, now() - start)
    }

    let plainDocument = try await open("plain.bin", versioned: false)
    let versionedDocument = try await open("versioned.bin", versioned: true)
    store.waitUntilIdle()
    var plain: (samples: [Double], total: Double) = ([], 0)
    var versioned: (samples: [Double], total: Double) = ([], 0)
    let rounds = 5
    for round in 0..<rounds {
        let count = saves / rounds + (round < saves % rounds ? 1 : 0)
        let first = plain.samples.count
        let p = try await run(plainDocument, saves: count, from: first)
        let v = try await run(versionedDocument, saves: count, from: first)
        plain = (plain.samples + p.samples, plain.total + p.total)
        versioned = (versioned.samples + v.samples, versioned.total + v.total)
    }
    _ = await plainDocument.close()
    _ = await versionedDocument.close()
    func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }
    let kept = store.otherVersionsOfItem(at: folder.appendingPathComponent("versioned.bin")).count
    let used = Double(store.diskUsage())
    // As many listings as saves, the way `docs versions` and a history screen list them.
    for _ in 0..<saves {
        for version in store.otherVersionsOfItem(at: folder.appendingPathComponent("versioned.bin")) {
            _ = (version.modificationDate, version.localizedNameOfSavingComputer, version.hasLocalContents)
        }
    }
    let listed = Double(store.diskUsage())
    // Chunks are loose files or inline in packs (with the records, a few KiB).
    let chunks = Double(
        bytesOfFiles(under: store.root.appendingPathComponent("chunks"))
            + bytesOfFiles(under: store.root.appendingPathComponent("packs")))
    let copies = Double(saves * size)
    let ratio = used / copies
    let mib = 1024.0 * 1024.0
    return [
        BenchmarkRow(
            name: "versions.save.1MiB.100x", unit: "MiB", value: used / mib, floor: copies / mib,
            floorDescription: "\(saves) full copies (\(kept) versions kept)", ratio: ratio,
            target: "at most a fifth of full copies", met: ratio <= 0.2),
        BenchmarkRow(
            name: "versions.store.after.listings", unit: "MiB", value: listed / mib, floor: chunks / mib,
            floorDescription:
                "the deduplicated chunks and packs alone, after \(saves) saves and \(saves) listings",
            ratio: listed / chunks, target: "at most 1.1x", met: listed / chunks <= 1.1),
        BenchmarkRow(
            name: "versions.save.1MiB.100x.time", unit: "ms", value: versioned.total / Double(saves) * 1000,
            floor: plain.total / Double(saves) * 1000,
            floorDescription:
                "the same saves without versions, in \(rounds) alternating rounds (median \(String(format: "%.2f", median(versioned.samples) * 1000)) vs \(String(format: "%.2f", median(plain.samples) * 1000)) ms)",
            ratio: versioned.total / plain.total, target: "at most 1.5x",
            met: versioned.total / plain.total <= 1.5),
    ]
}

/// The bytes of the regular files under `url`.
func bytesOfFiles(under url: URL) -> Int64 {
    var total: Int64 = 0
    guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return 0 }
    while let relative = enumerator.nextObject() as? String {
        var info = stat()
        if lstat(url.appendingPathComponent(relative).path, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            total += Int64(info.st_size)
        }
    }
    return total
}

/// `versions.store.open.swept`: the first write to a store that 1,000 killed saves left
/// staged entries in (it sweeps them), against the same first write to an empty store.
func benchmarkStoreSweep(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("versions-sweep")
    defer { try? FileManager.default.removeItem(at: folder) }
    let item = folder.appendingPathComponent("item.txt")
    try SafeSave.write(Data("item".utf8), to: item)
    let contents = folder.appendingPathComponent("contents.txt")
    // A process id no live process has: the highest the kernel hands out, plus one.
    let deadPID =
        (try? String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8))
        .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.map { $0 + 1 } ?? 4_194_305
    var swept: [Double] = []
    var empty: [Double] = []
    var unlinks: [Double] = []
    for index in 0..<iterations {
        let littered = folder.appendingPathComponent("littered-\(index)", isDirectory: true)
        let incoming = littered.appendingPathComponent("incoming", isDirectory: true)
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        for entry in 0..<1000 {
            let staged = incoming.appendingPathComponent("\(deadPID)-\(entry)")
            guard FileManager.default.createFile(atPath: staged.path, contents: Data(count: 4096)) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        let clean = folder.appendingPathComponent("clean-\(index)", isDirectory: true)
        try FileManager.default.createDirectory(at: clean, withIntermediateDirectories: true)
        for (root, into) in [(littered, 0), (clean, 1)] {
            try SafeSave.write(Data("version \(index)".utf8), to: contents)
            let began = now()
            _ = try VersionStore(root: root).addOfItem(at: item, withContentsOf: contents)
            let elapsed = (now() - began) * 1000
            if into == 0 { swept.append(elapsed) } else { empty.append(elapsed) }
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: incoming.path)) ?? []
        guard left.isEmpty else { throw CocoaError(.fileWriteUnknown) }
        // What removing those files costs at the least: unlink(2) of each, nothing else.
        let bare = folder.appendingPathComponent("bare-\(index)", isDirectory: true)
        try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: true)
        let names = (0..<1000).map { bare.appendingPathComponent("\(deadPID)-\($0)").path }
        for name in names { _ = FileManager.default.createFile(atPath: name, contents: Data(count: 4096)) }
        let began = now()
        for name in names { unlink(name) }
        unlinks.append((now() - began) * 1000)
    }
    swept.sort()
    empty.sort()
    unlinks.sort()
    let median = swept[swept.count / 2]
    let floor = empty[empty.count / 2]
    return BenchmarkRow(
        name: "versions.store.open.swept", unit: "ms", value: median, floor: floor,
        floorDescription:
            "the same first write to an empty store (\(iterations) runs); 1,000 bare unlink(2) took \(String(format: "%.1f", unlinks[unlinks.count / 2])) ms",
        ratio: median / max(floor, 0.001), target: "reported", met: true)
}
