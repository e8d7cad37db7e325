import DocumentKit
import Foundation

/// `save.data.1MiB`: a safe save of 1 MiB against the bare minimum a durable replace needs,
/// write + fsync + rename + fsync of the folder, of the same bytes in the same process.
func benchmarkSafeSave(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("save-data")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
    let target = folder.appendingPathComponent("document.bin")
    let floorTarget = folder.appendingPathComponent("floor.bin")
    try SafeSave.write(data, to: target)
    try bareDurableReplace(data, at: floorTarget)
    let (measured, floor) = try interleavedMedians(
        iterations, measured: { try SafeSave.write(data, to: target) },
        floor: { try bareDurableReplace(data, at: floorTarget) })
    let ratio = measured / floor
    return BenchmarkRow(
        name: "save.data.1MiB", unit: "ms", value: measured * 1000, floor: floor * 1000,
        floorDescription: "write+fsync+rename+dir fsync", ratio: ratio, target: "within 1.3x of floor",
        met: ratio <= 1.3)
}

/// The floor: the least a crash-safe replace of a file can do.
func bareDurableReplace(_ data: Data, at url: URL) throws {
    let temporary = url.path + ".floor-tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw Errno(rawValue: errno) }
    defer { close(fd) }
    try data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { throw Errno(rawValue: errno) }
            offset += written
        }
    }
    guard fsync(fd) == 0, rename(temporary, url.path) == 0 else { throw Errno(rawValue: errno) }
    let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard directory >= 0 else { throw Errno(rawValue: errno) }
    defer { close(directory) }
    guard fsync(directory) == 0 else { throw Errno(rawValue: errno) }
}
