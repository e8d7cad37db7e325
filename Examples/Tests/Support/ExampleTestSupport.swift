import DocumentKit
import Foundation
import Testing

/// A temporary folder for one test, removed when the value goes away.
final class TemporaryFolder: @unchecked Sendable {
    // Immutable after init; removal happens once, in deinit.
    let url: URL

    init(_ name: String = #function) throws {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            .appendingPathComponent("dk-examples-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ relativePath: String) -> URL {
        url.appendingPathComponent(relativePath)
    }

    @discardableResult
    func write(_ data: Data, to relativePath: String) throws -> URL {
        let target = file(relativePath)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target)
        return target
    }
}

/// Waits until the main queue has run everything queued on it before this call, which is when
/// an undo group opened by an edit of this turn closes and marks its document changed.
func nextMainQueueTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}

/// Polls `condition` until it holds or `timeout` passes; for work that finishes on other
/// queues (a save's write), not for timing, which tests drive with a manual clock.
@MainActor
func eventually(timeout: Duration = .seconds(10), _ condition: @MainActor () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Renames a class in a keyed archive's class table, to make archives naming other classes.
func renamingClass(_ oldName: String, to newName: String, in archive: Data) throws -> Data {
    var root = try #require(
        try PropertyListSerialization.propertyList(from: archive, options: [], format: nil) as? [String: Any])
    var objects = try #require(root["$objects"] as? [Any])
    var renamed = false
    for index in objects.indices {
        guard var entry = objects[index] as? [String: Any], entry["$classname"] as? String == oldName else {
            continue
        }
        entry["$classname"] = newName
        entry["$classes"] = [newName, "NSObject"]
        objects[index] = entry
        renamed = true
    }
    #expect(renamed, "no class named \(oldName) in the archive")
    root["$objects"] = objects
    return try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
}

/// The class names a keyed archive stores.
func classNames(in archive: Data) throws -> Set<String> {
    let root = try #require(
        try PropertyListSerialization.propertyList(from: archive, options: [], format: nil) as? [String: Any])
    let objects = try #require(root["$objects"] as? [Any])
    return Set(objects.compactMap { ($0 as? [String: Any])?["$classname"] as? String })
}

/// A class no example document stores, but one Foundation can find by name: an archive naming
/// it used to stop the process when read with secure coding on Linux.
final class ForeignObject: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    func encode(with coder: NSCoder) { coder.encode("foreign", forKey: "payload") }
    init?(coder: NSCoder) {}
}

/// An archive holding a ``ForeignObject`` under `key`, written by plain Foundation.
func foreignArchive(key: String) -> Data {
    let archiver = NSKeyedArchiver(requiringSecureCoding: true)
    archiver.encode(ForeignObject(), forKey: key)
    archiver.finishEncoding()
    return archiver.encodedData
}

/// Runs the example executables built beside the tests.
enum ExampleExecutable {
    static func url(_ name: String) -> URL {
        // The test bundle sits in the build products folder, beside the executables.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        for candidate in [
            directory, Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ] {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return directory.appendingPathComponent(name)
    }

    struct Outcome {
        var status: Int32
        var reason: Process.TerminationReason
        var standardOutput: String
        var standardError: String
    }

    /// An environment whose Documents folder is `documents` and whose home is `home`.
    static func environment(home: URL, documents: URL? = nil, extra: [String: String] = [:]) -> [String:
        String]
    {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["XDG_DOCUMENTS_DIR"] = documents?.path
        environment["LOCUS_DIR"] = nil
        return environment.merging(extra) { $1 }
    }

    /// A started child, whose output goes to files read when it ends.
    struct Child {
        let process: Process
        let output: URL
        let errors: URL
        private let exited: AsyncStream<Void>

        fileprivate init(process: Process, output: URL, errors: URL, exited: AsyncStream<Void>) {
            self.process = process
            self.output = output
            self.errors = errors
            self.exited = exited
        }

        /// What the child has written to standard output so far.
        var standardOutputSoFar: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

        /// Waits for the child to end without blocking a thread of the test's pool.
        func finish() async -> Outcome {
            for await _ in exited {}
            return Outcome(
                status: process.terminationStatus, reason: process.terminationReason,
                standardOutput: standardOutputSoFar,
                standardError: (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
        }
    }

    /// Starts `name` with its output going to files in `folder`.
    static func start(
        _ name: String, _ arguments: [String], environment: [String: String], outputIn folder: URL
    )
        throws -> Child
    {
        let output = folder.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6)).out")
        let errors = output.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = url(name)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        let (exited, continuation) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
        return Child(process: process, output: output, errors: errors, exited: exited)
    }

    /// Runs `name` to completion.
    static func run(
        _ name: String, _ arguments: [String] = [], environment: [String: String], outputIn folder: URL
    )
        async throws -> Outcome
    {
        try await start(name, arguments, environment: environment, outputIn: folder).finish()
    }
}
