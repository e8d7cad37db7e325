import DocumentKit
import Foundation

/// `coordinate.write.4KiB`: a coordinated safe save of 4 KiB against the same save uncoordinated.
func benchmarkCoordinatedWrite(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("coordinate-write")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("small.txt")
    let floorURL = folder.appendingPathComponent("floor.txt")
    let data = Data(repeating: 0x61, count: 4096)
    let coordinator = FileCoordinator(filePresenter: nil)
    try SafeSave.write(data, to: url)
    try SafeSave.write(data, to: floorURL)
    let (measured, floor) = try interleavedMedians(
        iterations,
        measured: {
            try coordinator.coordinate(writingItemAt: url, options: .forReplacing) {
                try SafeSave.write(data, to: $0)
            }
        },
        floor: { try SafeSave.write(data, to: floorURL) })
    return BenchmarkRow(
        name: "coordinate.write.4KiB", unit: "ms", value: measured * 1000, floor: floor * 1000,
        floorDescription: "the same safe save, uncoordinated", ratio: measured / floor,
        target: "within 1.5x of floor", met: measured / floor <= 1.5)
}

/// `coordinate.read.uncontended`: coordinated reads per second of a small file nobody else
/// uses, against plain reads of it.
func benchmarkCoordinatedRead(duration: Double) throws -> BenchmarkRow {
    let folder = try scratchFolder("coordinate-read").appendingPathComponent("a/b/c", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer {
        try? FileManager.default.removeItem(
            at: folder.deletingLastPathComponent().deletingLastPathComponent())
    }
    let url = folder.appendingPathComponent("notes.txt")
    try SafeSave.write(Data("hello".utf8), to: url)
    let coordinator = FileCoordinator(filePresenter: nil)
    func rate(_ body: () throws -> Void) rethrows -> Double {
        var count = 0
        let start = now()
        while now() - start < duration {
            for _ in 0..<100 { try body() }
            count += 100
        }
        return Double(count) / (now() - start)
    }
    let coordinated = try rate {
        _ = try coordinator.coordinate(readingItemAt: url, options: .withoutChanges) {
            try Data(contentsOf: $0)
        }
    }
    let plain = try rate { _ = try Data(contentsOf: url) }
    return BenchmarkRow(
        name: "coordinate.read.uncontended", unit: "reads/s", value: coordinated, floor: plain,
        floorDescription: "the same read, uncoordinated", ratio: plain / coordinated,
        target: "at least 20,000 reads/s", met: coordinated >= 20_000)
}
