import DocumentKit
import Foundation
import Synchronization

/// A document that keeps its file's bytes as they are, so that benchmarks measure the
/// document machinery rather than a format.
final class BytesDocument: Document {
    var bytes = Data()
    let writes = Atomic<Int>(0)

    override func contents(forType typeName: String) throws -> Any { bytes }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        bytes = data
    }

    nonisolated override func writeContents(
        _ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?
    ) throws {
        writes.add(1, ordering: .relaxed)
        try super.writeContents(
            contents, to: url, for: saveOperation, originalContentsURL: originalContentsURL)
    }
}

/// `document.save.1MiB`: a Document subclass's save against the bare durable replace.
@MainActor func benchmarkDocumentSave(iterations: Int) async throws -> BenchmarkRow {
    let folder = try scratchFolder("document-save")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("document.bin")
    let floorURL = folder.appendingPathComponent("floor.bin")
    let document = BytesDocument(fileURL: url)
    document.autosaveConfiguration.isEnabled = false
    document.bytes = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    guard await document.save(to: url, for: .forCreating) else { throw CocoaError(.fileWriteUnknown) }
    var measured: [Double] = []
    var floor: [Double] = []
    for index in 0..<iterations {
        document.bytes[index % document.bytes.count] &+= 1
        var start = now()
        guard await document.save(to: url, for: .forOverwriting) else { throw CocoaError(.fileWriteUnknown) }
        measured.append(now() - start)
        start = now()
        try bareDurableReplace(document.bytes, at: floorURL)
        floor.append(now() - start)
    }
    _ = await document.close()
    let m = measured.sorted()[measured.count / 2]
    let f = floor.sorted()[floor.count / 2]
    return BenchmarkRow(
        name: "document.save.1MiB", unit: "ms", value: m * 1000, floor: f * 1000,
        floorDescription: "write+fsync+rename+dir fsync", ratio: m / f, target: "within 1.3x of floor",
        met: m / f <= 1.3)
}

/// `document.open.100MiB`: opening and loading a 100 MiB document against a bare read of
/// the same file into memory.
@MainActor func benchmarkDocumentOpen(iterations: Int) async throws -> BenchmarkRow {
    let folder = try scratchFolder("document-open")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("large.bin")
    try SafeSave.write(Data(repeating: 0x5A, count: 100 << 20), to: url)
    var measured: [Double] = []
    var floor: [Double] = []
    for _ in 0..<iterations {
        var start = now()
        let document = BytesDocument(fileURL: url)
        guard await document.open() else { throw CocoaError(.fileReadUnknown) }
        measured.append(now() - start)
        precondition(document.bytes.count == 100 << 20)
        _ = await document.close()
        start = now()
        let bytes = try bareRead(url)
        floor.append(now() - start)
        precondition(bytes.count == 100 << 20)
    }
    let m = measured.sorted()[measured.count / 2]
    let f = floor.sorted()[floor.count / 2]
    return BenchmarkRow(
        name: "document.open.100MiB", unit: "ms", value: m * 1000, floor: f * 1000,
        floorDescription: "open+fstat+read into Data", ratio: m / f, target: "within 1.3x of floor",
        met: m / f <= 1.3)
}

func bareRead(_ url: URL) throws -> Data {
    let fd = open(url.path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw Errno(rawValue: errno) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw Errno(rawValue: errno) }
    var data = Data(count: Int(info.st_size))
    let count = data.count
    try data.withUnsafeMutableBytes { raw in
        var offset = 0
        while offset < count {
            let got = read(fd, raw.baseAddress! + offset, count - offset)
            guard got > 0 else { throw Errno(rawValue: got == 0 ? EIO : errno) }
            offset += got
        }
    }
    return data
}

/// `autosave.burst`: 100,000 edits spread over 10 simulated seconds of a manual clock, and
/// the number of saves autosave makes of them (quiet delay 2 s, maximum delay 10 s).
@MainActor func benchmarkAutosaveBurst() async throws -> BenchmarkRow {
    let folder = try scratchFolder("autosave-burst")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("burst.txt")
    let clock = ManualClock()
    let document = BytesDocument(fileURL: url)
    document.autosaveConfiguration.clock = AutosaveClock(clock)
    guard await document.save(to: url, for: .forCreating) else { throw CocoaError(.fileWriteUnknown) }
    let createWrites = document.writes.load(ordering: .relaxed)
    let edits = 100_000
    let step = Duration.seconds(10) / edits
    for index in 0..<edits {
        document.bytes.append(UInt8(truncatingIfNeeded: index))
        document.updateChangeCount(.done)
        await clock.advance(by: step)
    }
    // Let the last quiet delay pass and the save it starts finish.
    await clock.advance(by: .seconds(3))
    let deadline = now() + 30
    while document.hasUnsavedChanges && now() < deadline {
        await clock.advance(by: .milliseconds(100))
        try await Task.sleep(for: .milliseconds(5))
    }
    let saves = document.writes.load(ordering: .relaxed) - createWrites
    let onDisk = try Data(contentsOf: url)
    precondition(onDisk == document.bytes, "autosave.burst: the last edit did not reach the file")
    _ = await document.close()
    return BenchmarkRow(
        name: "autosave.burst", unit: "saves", value: Double(saves), floor: Double(edits),
        floorDescription: "one save per edit", ratio: Double(saves) / Double(edits),
        target: "at most 6 saves, last edit on disk", met: saves <= 6 && !document.hasUnsavedChanges)
}
