import Foundation
import Testing

/// A temporary folder for one test, removed when the value goes away.
final class TemporaryTree: @unchecked Sendable {
    let url: URL

    init(_ name: String = #function) throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = base.appendingPathComponent("dk-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Restore write permission on anything a test locked down, so removal succeeds.
        _ = try? Process.run(URL(fileURLWithPath: "/bin/chmod"), arguments: ["-R", "u+rwx", url.path])
            .waitUntilExit()
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ relativePath: String) -> URL {
        url.appendingPathComponent(relativePath)
    }

    @discardableResult
    func write(_ contents: String, to relativePath: String) throws -> URL {
        let target = file(relativePath)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: target)
        return target
    }
}

/// Runs the `DocumentKitTestChild` executable built beside the tests.
enum TestChild {
    static var executableURL: URL {
        // The test bundle sits in the build products folder, beside the executables.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        for candidate in [
            directory, Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ] {
            let url = candidate.appendingPathComponent("DocumentKitTestChild")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return directory.appendingPathComponent("DocumentKitTestChild")
    }

    struct Outcome {
        var status: Int32
        var reason: Process.TerminationReason
        var standardOutput: String
        var standardError: String
    }

    /// Starts the child and returns it running; output goes to pipes read by `finish`.
    static func start(_ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        return process
    }

    /// Runs the child to completion.
    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Outcome {
        let process = try start(arguments, environment: environment)
        return finish(process)
    }

    static func finish(_ process: Process) -> Outcome {
        let out = (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        let err = (process.standardError as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, reason: process.terminationReason,
            standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self))
    }
}
