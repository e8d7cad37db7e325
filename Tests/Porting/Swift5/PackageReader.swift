// Reading a document package with FileWrapper: children by name, their contents, and a
// package written back with a new child. Only the imports differ from the Apple-platform code.
import DocumentKit
import Foundation

public struct PackageSummary {
    public var names: [String]
    public var totalBytes: Int
    public var notes: String?
}

public enum PackageReader {
    public static func summary(of url: URL) throws -> PackageSummary {
        let package = try FileWrapper(url: url, options: .immediate)
        guard package.isDirectory, let children = package.fileWrappers else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var total = 0
        for (_, child) in children where child.isRegularFile {
            total += child.regularFileContents?.count ?? 0
        }
        let notes = children["notes.txt"]?.regularFileContents.map { String(decoding: $0, as: UTF8.self) }
        return PackageSummary(names: children.keys.sorted(), totalBytes: total, notes: notes)
    }

    /// Adds a file to the package at `url` and writes it back in place.
    public static func add(_ data: Data, named name: String, toPackageAt url: URL) throws {
        let package = try FileWrapper(url: url, options: .immediate)
        let child = FileWrapper(regularFileWithContents: data)
        child.preferredFilename = name
        package.addFileWrapper(child)
        try package.write(to: url, options: .atomic, originalContentsURL: url)
    }
}
