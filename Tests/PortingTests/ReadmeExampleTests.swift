import Foundation
import Synchronization
import Testing

/// The README's example is `Tests/Readme/main.swift`, character for character, so that what a
/// new user copies compiles (Swift 6, strict concurrency) and does what its comments say.
@Suite struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced Swift blocks of a Markdown file, in order.
    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func theReadmeExampleIsTheCompiledTarget() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/Readme/main.swift"), encoding: .utf8)
        let blocks = Self.swiftBlocks(in: readme)
        #expect(blocks.count == 1, "the README's Swift blocks: \(blocks.count)")
        #expect(blocks.first == compiled, "README.md's example and Tests/Readme/main.swift differ")
    }

    @Test func theReadmeExampleDoesWhatItsCommentsSay() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "readme-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = folder.path
        environment["XDG_DATA_HOME"] = folder.appendingPathComponent("data").path
        let (status, printed) = try runExample("readme-example", environment: environment, timeout: 60)
        #expect(status == 0, "\(printed)")

        let lines = printed.split(separator: "\n").map(String.init).filter { $0 != "state changed" }
        #expect(lines.count == 4, "\(printed)")
        #expect(lines.prefix(3) == ["hello from elsewhere", "hello, typed here", "hello from elsewhere"])
        let versions = lines.last.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        #expect(versions >= 1, "the autosave kept the created file's contents: \(lines.last ?? "-")")
        #expect(printed.contains("state changed"), "the conflict was announced")
        #expect(
            try String(contentsOf: folder.appendingPathComponent("note.txt"), encoding: .utf8)
                == "hello from elsewhere",
            "closing a document whose conflict was resolved wrote nothing over it")
        #expect(
            try String(contentsOf: folder.appendingPathComponent("Notes.pkg/index.md"), encoding: .utf8)
                == "# Notes\n")
    }
}

/// The executable product `name` of this build, beside the test bundle.
func executable(_ name: String) -> URL {
    var binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if binary.pathExtension == "xctest" { binary.deleteLastPathComponent() }
    if !FileManager.default.isExecutableFile(atPath: binary.appendingPathComponent(name).path) {
        binary.deleteLastPathComponent()
    }
    return binary.appendingPathComponent(name)
}

/// Runs one of the package's example executables, built beside the tests, and returns its
/// exit status and standard output; killed after `timeout` seconds, a failure bound rather
/// than a wait a test relies on, so that a hung run fails instead of hanging.
func runExample(_ name: String, arguments: [String] = [], environment: [String: String], timeout: Double)
    throws -> (status: Int32, output: String)
{
    let process = Process()
    process.executableURL = executable(name)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let pid = process.processIdentifier
    let ended = Ended()
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
        ended.flag.withLock { if !$0 { kill(pid, SIGKILL) } }
    }
    defer { ended.flag.withLock { $0 = true } }
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    ended.flag.withLock { $0 = true }
    return (process.terminationStatus, printed)
}

/// Whether a child was waited for, so that its watchdog never signals a reused process ID.
final class Ended: Sendable {
    let flag = Mutex(false)
}
