import DocumentKit
import Foundation
import Locus
import Testing

/// A Locus document that keeps the errors it is told about, as an app's subclass would.
final class CapturingLocusDocument: LocusDocument {
    var errors: [any Error] = []

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        errors.append(error)
        finishedHandlingError(error, recovered: false)
    }
}

@MainActor
@Suite("LocusDocument (seed 001)")
struct LocusDocumentTests {
    /// Values whose decimal forms do not survive a round trip through text, so exactness shows.
    static let awkwardModel = LocusModel(
        name: "Route 7 — 東京",
        stops: [
            LocusStop(name: "Pike Place", latitude: 47.609_722_222_222_22, longitude: -122.342_222_222_222_2),
            LocusStop(name: "Tiny", latitude: 0.1 + 0.2, longitude: -Double.leastNonzeroMagnitude),
        ])
    static let awkwardRegion = MapRegion(
        center: .init(latitude: 0.1 + 0.2, longitude: -122.332_100_000_000_01),
        span: .init(latitudeDelta: 1e-9, longitudeDelta: 359.999_999_999_999_9))

    /// A new document saved to `name` in `folder`.
    func createdDocument(in folder: TemporaryFolder, named name: String = "Map.locus") async throws
        -> CapturingLocusDocument
    {
        let document = CapturingLocusDocument(fileURL: folder.file(name))
        #expect(await document.save(to: folder.file(name), for: .forCreating))
        return document
    }

    @Test func aNewDocumentHasAnEmptyRouteAndTheInitialRegion() async throws {
        let folder = try TemporaryFolder()
        let document = try await createdDocument(in: folder)
        #expect(document.model.stops.isEmpty)
        #expect(document.mapRegion == .initial)
        #expect(document.fileType == LocusDocument.typeIdentifier)
        #expect(await document.close())
    }

    @Test func panningMarksTheDocumentChangedAndAutosaveWritesIt() async throws {
        let folder = try TemporaryFolder()
        let document = try await createdDocument(in: folder)
        let clock = ManualClock()
        document.autosaveConfiguration.clock = AutosaveClock(clock)
        #expect(!document.hasUnsavedChanges)

        let panned = document.mapRegion.panned(latitude: 0.01, longitude: -0.02)
        document.mapRegion = panned
        #expect(document.hasUnsavedChanges)

        // Not before the quiet delay...
        await clock.advance(by: .seconds(1))
        #expect(document.hasUnsavedChanges)
        // ...but after it, by itself: nothing here calls save.
        await clock.advance(by: .seconds(2))
        #expect(await eventually { !document.hasUnsavedChanges })
        #expect(document.errors.isEmpty)

        let reopened = CapturingLocusDocument(fileURL: document.fileURL)
        #expect(await reopened.open())
        #expect(reopened.mapRegion == panned)
        #expect(await reopened.close())
        #expect(await document.close())
    }

    @Test func reopeningRestoresTheModelAndTheRegionExactly() async throws {
        let folder = try TemporaryFolder()
        let document = try await createdDocument(in: folder)
        document.model = Self.awkwardModel
        document.mapRegion = Self.awkwardRegion
        #expect(await document.close())

        let reopened = CapturingLocusDocument(fileURL: document.fileURL)
        #expect(await reopened.open())
        #expect(reopened.model == Self.awkwardModel)
        #expect(reopened.model.stops.map(\.latitude) == Self.awkwardModel.stops.map(\.latitude))
        #expect(reopened.mapRegion == Self.awkwardRegion)
        #expect(!reopened.hasUnsavedChanges)
        #expect(reopened.errors.isEmpty)
        #expect(await reopened.close())
    }

    @Test func theArchiveUsesStableClassNamesAndTheSeedsKeys() async throws {
        let folder = try TemporaryFolder()
        let document = CapturingLocusDocument(fileURL: folder.file("Map.locus"))
        document.model = Self.awkwardModel
        let archive = try #require(try document.contents(forType: LocusDocument.typeIdentifier) as? Data)

        let names = try classNames(in: archive)
        #expect(names.isSuperset(of: ["LocusModel", "LocusStop"]))
        #expect(!names.contains { $0.contains(".") }, "module-qualified names: \(names)")

        let root = try #require(
            try PropertyListSerialization.propertyList(from: archive, options: [], format: nil)
                as? [String: Any])
        let top = try #require(root["$top"] as? [String: Any])
        #expect(
            Set(top.keys) == [
                "model", "StopPickerRegionLat", "StopPickerRegionLong", "StopPickerRegionLatDelta",
                "StopPickerRegionLongDelta",
            ])
    }

    @Test func anArchiveWithModuleQualifiedNamesStillOpens() async throws {
        let folder = try TemporaryFolder()
        let writer = CapturingLocusDocument(fileURL: folder.file("Map.locus"))
        writer.model = Self.awkwardModel
        var archive = try #require(try writer.contents(forType: LocusDocument.typeIdentifier) as? Data)
        archive = try renamingClass("LocusModel", to: "Locus.LocusModel", in: archive)
        archive = try renamingClass("LocusStop", to: "Locus.LocusStop", in: archive)
        let url = try folder.write(archive, to: "Old.locus")

        let document = CapturingLocusDocument(fileURL: url)
        #expect(await document.open())
        #expect(document.model == Self.awkwardModel)
        #expect(await document.close())
    }

    enum BadArchive: String, CaseIterable, Sendable {
        case truncated, empty, notAnArchive, unknownClass, foreignClass, foundationClass, noModel,
            regionOffTheGlobe
    }

    /// The bytes of each kind of bad Locus file.
    func bytes(of kind: BadArchive) throws -> Data {
        let writer = CapturingLocusDocument(fileURL: URL(fileURLWithPath: "/nonexistent/Map.locus"))
        writer.model = Self.awkwardModel
        let good = try #require(try writer.contents(forType: LocusDocument.typeIdentifier) as? Data)
        switch kind {
        case .truncated:
            return good.prefix(good.count * 2 / 3)
        case .empty:
            return Data()
        case .notAnArchive:
            return Data("just some text".utf8)
        case .unknownClass:
            return try renamingClass("LocusStop", to: "MysteryStop", in: good)
        case .foreignClass:
            // A class Foundation can find by name: secure decoding used to abort on it.
            return foreignArchive(key: "model")
        case .foundationClass:
            return try renamingClass("LocusStop", to: "NSDate", in: good)
        case .noModel:
            return foreignArchive(key: "somethingElse")
        case .regionOffTheGlobe:
            writer.mapRegion = MapRegion(
                center: .init(latitude: 200, longitude: 0), span: .init(latitudeDelta: 1, longitudeDelta: 1))
            return try #require(try writer.contents(forType: LocusDocument.typeIdentifier) as? Data)
        }
    }

    @Test(arguments: BadArchive.allCases)
    func aBadArchiveFailsToOpenWithAnErrorNamingTheFileAndLeavesItAsItWas(_ kind: BadArchive) async throws {
        let folder = try TemporaryFolder()
        let bytes = try bytes(of: kind)
        let url = try folder.write(bytes, to: "Bad.locus")
        let document = CapturingLocusDocument(fileURL: url)

        #expect(await document.open() == false)

        #expect(document.documentState.contains(.closed))
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect(error.code == .corruptFile)
        #expect(error.url?.standardizedFileURL == url.standardizedFileURL)
        #expect(error.description.contains(url.path))
        #expect(error.underlying is KeyedArchiveError)
        #expect(try Data(contentsOf: url) == bytes)
        // Nothing half-read leaks into the document.
        #expect(document.model.stops.isEmpty)
        #expect(document.mapRegion == .initial)
    }

    @Test func anArchiveNamingAnotherClassSaysWhichClass() async throws {
        let folder = try TemporaryFolder()
        let url = try folder.write(try bytes(of: .unknownClass), to: "Bad.locus")
        let document = CapturingLocusDocument(fileURL: url)
        #expect(await document.open() == false)
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect((error.underlying as? KeyedArchiveError)?.code == .unexpectedClass)
        #expect(error.description.contains("MysteryStop"))
    }

    @Test func panningWrapsAtTheDateLineAndStopsAtThePoles() {
        let region = MapRegion(
            center: .init(latitude: 89.5, longitude: 179.5), span: .init(latitudeDelta: 1, longitudeDelta: 1))
        let moved = region.panned(latitude: 1, longitude: 1)
        #expect(moved.center.latitude == 90)
        #expect(moved.center.longitude == -179.5)
        #expect(moved.isValid)
    }
}
