import DocumentKit
import Foundation

/// `save.package.1000x4KiB.1changed`: saving a 1,000-file package after changing one file,
/// reusing the unchanged files of the original, against writing the whole package anew.
func benchmarkPackageSave(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("save-package")
    defer { try? FileManager.default.removeItem(at: folder) }
    let package = folder.appendingPathComponent("Large.pkg")
    let whole = folder.appendingPathComponent("Whole.pkg")
    var children: [String: FileWrapper] = [:]
    for index in 0..<1000 {
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &+ index) })
        children[String(format: "part-%04d.bin", index)] = FileWrapper(regularFileWithContents: bytes)
    }
    try FileWrapper(directoryWithFileWrappers: children).write(
        to: package, options: .atomic, originalContentsURL: nil)

    var generation = 0
    func saveWhole() throws {
        let wrapper = FileWrapper(directoryWithFileWrappers: children)
        try wrapper.write(to: whole, options: .atomic, originalContentsURL: nil)
    }
    // Reading the package is part of a real edit but not of the save: time the write only.
    var measured: [Double] = []
    var floor: [Double] = []
    for _ in 0..<iterations {
        let wrapper = try FileWrapper(url: package, options: .immediate)
        generation += 1
        let changed = wrapper.fileWrappers!["part-0500.bin"]!
        wrapper.removeFileWrapper(changed)
        let replacement = FileWrapper(
            regularFileWithContents: Data(repeating: UInt8(truncatingIfNeeded: generation), count: 4096))
        replacement.preferredFilename = "part-0500.bin"
        wrapper.addFileWrapper(replacement)
        var start = now()
        try wrapper.write(to: package, options: .atomic, originalContentsURL: package)
        measured.append(now() - start)
        start = now()
        try saveWhole()
        floor.append(now() - start)
    }
    let m = measured.sorted()[measured.count / 2]
    let f = floor.sorted()[floor.count / 2]
    return BenchmarkRow(
        name: "save.package.1000x4KiB.1changed", unit: "ms", value: m * 1000, floor: f * 1000,
        floorDescription: "whole package written anew", ratio: m / f,
        target: "at most 0.1x of the whole-package write", met: m / f <= 0.1)
}
