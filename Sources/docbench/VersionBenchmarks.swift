import DocumentKit
import Foundation

/// `versions.save.1MiB.100x`: 100 saves of a 1 MiB document with one line changed each; the
/// disk the version store uses against 100 full copies (target: at most a fifth), and the
/// time per save with versions against the same document without.
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

    func run(_ name: String, versioned: Bool) async throws -> (perSave: Double, total: Double) {
        let url = folder.appendingPathComponent(name)
        let document = BytesDocument(fileURL: url)
        document.versionStore = versioned ? store : nil
        document.autosaveConfiguration.isEnabled = false
        document.bytes = base
        guard await document.save(to: url, for: .forCreating) else { throw CocoaError(.fileWriteUnknown) }
        var samples: [Double] = []
        var generator = SystemRandomNumberGenerator()
        let start = now()
        for index in 0..<saves {
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
        if versioned { store.waitUntilIdle() }
        let total = now() - start
        _ = await document.close()
        samples.sort()
        return (samples[samples.count / 2], total)
    }

    let plain = try await run("plain.bin", versioned: false)
    let versioned = try await run("versioned.bin", versioned: true)
    let kept = store.otherVersionsOfItem(at: folder.appendingPathComponent("versioned.bin")).count
    let used = Double(store.diskUsage())
    let copies = Double(saves * size)
    let ratio = used / copies
    let mib = 1024.0 * 1024.0
    return [
        BenchmarkRow(
            name: "versions.save.1MiB.100x", unit: "MiB", value: used / mib, floor: copies / mib,
            floorDescription: "\(saves) full copies (\(kept) versions kept)", ratio: ratio,
            target: "at most a fifth of full copies", met: ratio <= 0.2),
        BenchmarkRow(
            name: "versions.save.1MiB.100x.time", unit: "ms", value: versioned.total / Double(saves) * 1000,
            floor: plain.total / Double(saves) * 1000,
            floorDescription:
                "the same saves without versions (median \(String(format: "%.2f", versioned.perSave * 1000)) vs \(String(format: "%.2f", plain.perSave * 1000)) ms)",
            ratio: versioned.total / plain.total, target: "reported", met: true),
    ]
}
