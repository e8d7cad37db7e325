import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `resourcevalues.ubiquitous.10000`: the "is it downloaded yet?" call an app makes for each row
/// of its list, `url.resourceValues(forKeys:)` with Apple's ubiquitous keys, for each of 10,000
/// documents of a container whose agent published 10,000 synced files, against Foundation's own
/// `resourceValues(forKeys: [.fileSizeKey])` of each (a stat a document, the least a row costs).
func benchmarkUbiquitousResourceValues(items: Int, iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("ubiquitous-resource-values")
    let previousHome = UbiquityConfiguration.configurationHome
    let previousState = ProcessInfo.processInfo.environment["XDG_STATE_HOME"]
    // The container's settings and its agent's status, here rather than the user's.
    UbiquityConfiguration.configurationHome = folder.appendingPathComponent("config", isDirectory: true)
    setenv("XDG_STATE_HOME", folder.appendingPathComponent("state").path, 1)
    defer {
        UbiquityConfiguration.configurationHome = previousHome
        if let previousState {
            setenv("XDG_STATE_HOME", previousState, 1)
        } else {
            unsetenv("XDG_STATE_HOME")
        }
        try? FileManager.default.removeItem(at: folder)
    }
    let container = folder.appendingPathComponent("Box", isDirectory: true)
    let documents = container.appendingPathComponent("Documents", isDirectory: true)
    try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
    try UbiquityConfiguration.update {
        try $0.add(
            UbiquityContainer(
                name: "box", identifier: "iCloud.box", folder: container.path, remote: "file:///srv/box"))
    }
    var status = UbiquityStatus(state: .upToDate, remote: "file:///srv/box")
    var urls: [URL] = []
    for index in 0..<items {
        let url = documents.appendingPathComponent("Note \(index).txt")
        try Data("note \(index)\n".utf8).write(to: url)
        guard let stat = FileStatus(path: url.path) else { throw CocoaError(.fileReadUnknown) }
        status.synced["Documents/Note \(index).txt"] = UbiquityStatus.record(of: stat)
        urls.append(url)
    }
    try status.write(to: SyncStateFiles.status(forContainer: container))
    let keys: [URLResourceKey] = [
        .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsUploadedKey,
        .ubiquitousItemHasUnresolvedConflictsKey,
    ]
    var failed = false
    let medians = try interleavedMedians(
        iterations,
        measured: {
            for url in urls {
                let values = try url.resourceValues(forKeys: keys)
                if values.ubiquitousItemDownloadingStatus != .current
                    || values.ubiquitousItemIsUploaded != true
                {
                    failed = true
                }
            }
        },
        floor: {
            for url in urls where try url.resourceValues(forKeys: [.fileSizeKey]).fileSize == nil {
                failed = true
            }
        })
    if failed { throw CocoaError(.fileReadUnknown) }
    let ratio = medians.measured / medians.floor
    return BenchmarkRow(
        name: "resourcevalues.ubiquitous.\(items)", unit: "ms", value: medians.measured * 1000,
        floor: medians.floor * 1000,
        floorDescription: "Foundation's resourceValues(forKeys: [.fileSizeKey]) of each (\(iterations) runs)",
        ratio: ratio, target: "within 10x", met: ratio <= 10)
}
