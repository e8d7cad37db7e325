import Foundation
import Testing

/// The `locus` executable, run as a user runs it.
@Suite("locus command")
struct LocusCommandTests {
    /// The text after `prefix` on the first line of `output` that starts with it.
    func value(after prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }
            .map { $0.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces) }
    }

    @Test func aPanIsAutosavedAndRestoredOnTheNextRun() async throws {
        let folder = try TemporaryFolder()
        let container = folder.file("My Maps")
        let environment = ExampleExecutable.environment(home: folder.url)

        let first = try await ExampleExecutable.run(
            "locus", ["--container", container.path, "pan", "0.01", "-0.02"], environment: environment,
            outputIn: folder.url)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("created"))
        #expect(first.standardOutput.contains("autosaved after"))
        let panned = try #require(value(after: "panned to:", in: first.standardOutput))
        #expect(panned == "centre 47.61620, -122.35210; span 0.05000 x 0.05000")

        // The second run finds the container through LOCUS_DIR instead of the option.
        var second = environment
        second["LOCUS_DIR"] = container.path
        let next = try await ExampleExecutable.run(
            "locus", ["show"], environment: second, outputIn: folder.url)
        #expect(next.status == 0, "\(next.standardError)")
        #expect(next.standardOutput.contains("opened"))
        #expect(value(after: "saved region:", in: next.standardOutput) == panned)
    }

    @Test func theDefaultContainerIsLocusInTheDocumentsFolder() async throws {
        let folder = try TemporaryFolder()
        let documents = folder.file("Docs")
        let environment = ExampleExecutable.environment(home: folder.url, documents: documents)
        let outcome = try await ExampleExecutable.run(
            "locus", ["show"], environment: environment, outputIn: folder.url)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(
            FileManager.default.fileExists(atPath: documents.appendingPathComponent("Locus/Map.locus").path))
    }

    @Test func aCorruptDocumentIsReportedAndLeftAlone() async throws {
        let folder = try TemporaryFolder()
        let bytes = Data("bplist00 but not really".utf8)
        let url = try folder.write(bytes, to: "c/Map.locus")
        let outcome = try await ExampleExecutable.run(
            "locus", ["--container", folder.file("c").path],
            environment: ExampleExecutable.environment(home: folder.url),
            outputIn: folder.url)
        #expect(outcome.status == 1)
        #expect(outcome.standardError.hasPrefix("locus: "))
        #expect(outcome.standardError.contains(url.path))
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func aContainerThatIsAFileIsRefused() async throws {
        let folder = try TemporaryFolder()
        let file = try folder.write(Data("x".utf8), to: "not-a-folder")
        let outcome = try await ExampleExecutable.run(
            "locus", ["--container", file.path], environment: ExampleExecutable.environment(home: folder.url),
            outputIn: folder.url)
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("is a file, not a folder"))
    }

    @Test(arguments: [["pan", "1"], ["pan", "north", "2"], ["--container"], ["fly"]])
    func badUsageExitsWithStatusTwo(_ arguments: [String]) async throws {
        let folder = try TemporaryFolder()
        let outcome = try await ExampleExecutable.run(
            "locus", arguments, environment: ExampleExecutable.environment(home: folder.url),
            outputIn: folder.url)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("usage: locus"))
    }
}
