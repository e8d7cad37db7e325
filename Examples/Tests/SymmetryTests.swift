import DocumentKit
import Foundation
import Symmetry
import Testing

@MainActor
@Suite("SymmetryDocument (seed 003)")
struct SymmetryDocumentTests {
    func directories(home: URL) -> StandardDirectories {
        StandardDirectories(environment: ["HOME": home.path])
    }

    @Test func theArchiveRoundTripsShapesUnderStableClassNames() throws {
        let shapes = (0..<7).map(SymmetryShape.example(number:))
        let archive = try SymmetryDocument.archive(shapes)
        #expect(try SymmetryDocument.shapes(fromArchive: archive) == shapes)
        let names = try classNames(in: archive)
        #expect(names == ["NSArray", "SymmetryShape"])
    }

    @Test func theArchiveIsTheArrayAsRootObjectAsTheSeedWroteIt() throws {
        let archive = try SymmetryDocument.archive([.example(number: 1)])
        let root = try #require(
            try PropertyListSerialization.propertyList(from: archive, options: [], format: nil)
                as? [String: Any])
        let top = try #require(root["$top"] as? [String: Any])
        #expect(Set(top.keys) == [NSKeyedArchiveRootObjectKey])
    }

    @Test func launchCreatesAnEmptyArchiveAndTheDocumentsFolderWhenMissing() async throws {
        let folder = try TemporaryFolder()
        let directories = directories(home: folder.url)
        let url = SymmetryDocument.archiveURL(in: directories)
        #expect(url.path == folder.file("Documents/Symmetry.archive").path)

        let document = try await SymmetryDocument.launch(in: directories)
        #expect(document.shapes.isEmpty)
        #expect(!document.documentState.contains(.closed))
        #expect(try SymmetryDocument.shapes(fromArchive: Data(contentsOf: url)).isEmpty)

        document.append(.example(number: 0))
        #expect(document.hasUnsavedChanges)
        #expect(await document.close())
        #expect(try SymmetryDocument.shapes(fromArchive: Data(contentsOf: url)) == [.example(number: 0)])
    }

    @Test func launchOpensTheExistingArchive() async throws {
        let folder = try TemporaryFolder()
        let directories = directories(home: folder.url)
        let shapes = [SymmetryShape.example(number: 3), .example(number: 4)]
        try folder.write(try SymmetryDocument.archive(shapes), to: "Documents/Symmetry.archive")

        let document = try await SymmetryDocument.launch(in: directories)
        #expect(document.shapes == shapes)
        #expect(!document.hasUnsavedChanges)
        #expect(await document.close())
    }

    @Test func launchRefusesAnUnreadableArchiveNamingItAndLeavesItAlone() async throws {
        let folder = try TemporaryFolder()
        let bytes = try SymmetryDocument.archive([.example(number: 1)]).prefix(40)
        let url = try folder.write(Data(bytes), to: "Documents/Symmetry.archive")

        let error = try await #require(throws: DocumentKitError.self) {
            try await SymmetryDocument.launch(in: directories(home: folder.url))
        }
        #expect(error.url?.standardizedFileURL == url.standardizedFileURL)
        #expect(error.description.contains(url.path))
        #expect(try Data(contentsOf: url) == bytes)
    }
}

/// The `symmetry` executable, run as a user runs it, with its Documents folder in a temporary folder.
@Suite("symmetry command")
struct SymmetryCommandTests {
    func shapeCount(at url: URL) throws -> Int {
        try SymmetryDocument.shapes(fromArchive: Data(contentsOf: url)).count
    }

    @Test func eachRunAddsAShapeThatIsSavedAsTheProcessQuits() async throws {
        let folder = try TemporaryFolder()
        let documents = folder.file("Docs")
        let archive = documents.appendingPathComponent("Symmetry.archive")
        let environment = ExampleExecutable.environment(home: folder.url, documents: documents)

        let first = try await ExampleExecutable.run(
            "symmetry", environment: environment, outputIn: folder.url)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("\(archive.path) holds 0 shapes"))
        #expect(try shapeCount(at: archive) == 1)

        let second = try await ExampleExecutable.run(
            "symmetry", environment: environment, outputIn: folder.url)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("holds 1 shape\n"))
        #expect(second.standardOutput.contains("  1. \(SymmetryShape.example(number: 0))"))
        #expect(try shapeCount(at: archive) == 2)
        #expect(
            try SymmetryDocument.shapes(fromArchive: Data(contentsOf: archive)) == [
                .example(number: 0), .example(number: 1),
            ])
    }

    @Test func theDocumentsFolderComesFromHomeWhenNotConfigured() async throws {
        let folder = try TemporaryFolder()
        let environment = ExampleExecutable.environment(home: folder.url)
        let outcome = try await ExampleExecutable.run(
            "symmetry", environment: environment, outputIn: folder.url)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try shapeCount(at: folder.file("Documents/Symmetry.archive")) == 1)
    }

    @Test func sigtermWhileWaitingSavesTheDrawing() async throws {
        let folder = try TemporaryFolder()
        let documents = folder.file("Docs")
        let archive = documents.appendingPathComponent("Symmetry.archive")
        let environment = ExampleExecutable.environment(home: folder.url, documents: documents)

        let child = try ExampleExecutable.start(
            "symmetry", ["--wait"], environment: environment, outputIn: folder.url)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(20))
        while !child.standardOutputSoFar.contains("waiting for SIGTERM") && child.process.isRunning
            && clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(child.standardOutputSoFar.contains("waiting for SIGTERM"))
        // Created empty at launch; the added shape is only in memory until the quit.
        #expect(try shapeCount(at: archive) == 0)

        child.process.terminate()
        let outcome = await child.finish()
        // Ended by the signal, or by DocumentKit's fallback exit status 128 + SIGTERM when the
        // re-raised signal is blocked on the thread that saved.
        let endedBySignal = outcome.reason == .uncaughtSignal && outcome.status == SIGTERM
        let exitedForSignal = outcome.reason == .exit && outcome.status == 128 + SIGTERM
        #expect(endedBySignal || exitedForSignal, "\(outcome.reason) \(outcome.status)")
        #expect(try shapeCount(at: archive) == 1)
    }

    enum Corruption: String, CaseIterable, Sendable {
        case garbage, truncated, empty, foreignClass, foundationClass, notAnArray
    }

    func bytes(of corruption: Corruption) throws -> Data {
        let good = try SymmetryDocument.archive([.example(number: 0), .example(number: 1)])
        switch corruption {
        case .garbage: return Data((0..<200).map { UInt8(($0 * 37) & 0xFF) })
        case .truncated: return good.prefix(good.count / 2)
        case .empty: return Data()
        case .foreignClass: return foreignArchive(key: NSKeyedArchiveRootObjectKey)
        case .foundationClass: return try renamingClass("SymmetryShape", to: "NSDate", in: good)
        case .notAnArray:
            let archiver = NSKeyedArchiver(requiringSecureCoding: true)
            archiver.encode("a string, not shapes", forKey: NSKeyedArchiveRootObjectKey)
            archiver.finishEncoding()
            return archiver.encodedData
        }
    }

    @Test(arguments: Corruption.allCases)
    func anUnreadableArchiveFailsLaunchNamingTheFileAndIsLeftAsItWas(_ corruption: Corruption) async throws {
        let folder = try TemporaryFolder()
        let bytes = try bytes(of: corruption)
        let archive = try folder.write(bytes, to: "Docs/Symmetry.archive")
        let environment = ExampleExecutable.environment(home: folder.url, documents: folder.file("Docs"))

        let outcome = try await ExampleExecutable.run(
            "symmetry", environment: environment, outputIn: folder.url)

        #expect(outcome.reason == .exit)
        #expect(outcome.status == 1)
        #expect(outcome.standardError.hasPrefix("symmetry: cannot open the drawing: "))
        #expect(outcome.standardError.contains(archive.path))
        #expect(try Data(contentsOf: archive) == bytes)
    }
}
