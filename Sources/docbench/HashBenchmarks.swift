import DocumentKit
import Foundation

/// `hash.sha256.100MiB`: ContentHash (libcrypto) hashing a 100 MiB file from the page cache,
/// against coreutils' `sha256sum` of the same file run as a process (its whole wall time),
/// interleaved so that a busy neighbour slows both alike. Both must print the same digest.
func benchmarkContentHash(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("hash")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("large.bin")
    // Bytes that do not repeat, so no layer below can shortcut them.
    var state: UInt64 = 0x6861_7368
    var bytes = Data(count: 100 << 20)
    bytes.withUnsafeMutableBytes { raw in
        for index in 0..<raw.count / 8 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            raw.storeBytes(of: z ^ (z >> 31), toByteOffset: index * 8, as: UInt64.self)
        }
    }
    try SafeSave.write(bytes, to: url)
    bytes = Data()

    var ours = ""
    var theirs = ""
    let (measured, floor) = try interleavedMedians(
        iterations,
        measured: { ours = try ContentHash(contentsOf: url).hex },
        floor: { theirs = try sha256sum(url) })
    guard ours == theirs else {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(ours) != \(theirs)"])
    }
    let ratio = measured / floor
    return BenchmarkRow(
        name: "hash.sha256.100MiB", unit: "ms", value: measured * 1000, floor: floor * 1000,
        floorDescription:
            "sha256sum of the same file, as a process (\(iterations) runs each, \(String(format: "%.0f", 100 / measured)) vs \(String(format: "%.0f", 100 / floor)) MiB/s)",
        ratio: ratio, target: "within 1.2x of floor", met: ratio <= 1.2)
}

/// The digest `sha256sum` prints for `url`.
private func sha256sum(_ url: URL) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [url.path]
    let output = Pipe()
    process.standardOutput = output
    try BenchmarkRun.start(process)
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    BenchmarkRun.wait(for: process)
    guard process.terminationStatus == 0,
        let digest = String(decoding: printed, as: UTF8.self).split(separator: " ").first
    else { throw CocoaError(.executableLoad) }
    return String(digest)
}
