import DocumentKit
import Foundation

/// A Locus document: a route of stops and the map region the user last looked at, ported
/// from the OmniUI document of the "Omni Frameworks part 3" post.
///
/// The seed's lesson is kept: changing ``mapRegion`` calls `updateChangeCount(.done)`, or
/// the document never learns it has something to save and panning is lost. With that call,
/// panning the map makes the document dirty, autosave writes it a moment later, and the
/// next open puts the map back where the user left it.
///
/// The file is an `NSKeyedArchiver` archive, as in the seed: the model under `"model"` and
/// the region's four doubles under the seed's `StopPicker...` keys. Reading refuses any
/// class but the document's own, so a damaged or foreign archive fails to open, with an
/// error naming the file, instead of stopping the process.
///
/// For example:
///
/// ```swift
/// let document = LocusDocument(fileURL: url)
/// if await document.open() {
///     document.mapRegion = document.mapRegion.panned(latitude: 0.01, longitude: 0)
///     // autosaved two seconds later; reopening restores the region
/// }
/// ```
///
/// Subclass it to take part in error handling (override `handleError(_:userInteractionPermitted:)`).
@MainActor
open class LocusDocument: UIDocument {
    /// The type identifier of Locus documents, whose files end in `.locus`.
    public static let typeIdentifier = "org.documentkit.example.locus"

    /// Registers the Locus type so that `.locus` files report ``typeIdentifier``.
    private static let typeRegistration: Void = {
        FileTypes.shared.register(
            FileTypes.FileType(
                identifier: typeIdentifier, filenameExtensions: ["locus"], conformsTo: ["public.data"]))
    }()

    /// Creates a document for the file at `url`, holding an empty route and the initial
    /// region until it is opened.
    public override init(fileURL url: URL) {
        _ = LocusDocument.typeRegistration
        super.init(fileURL: url)
    }

    /// The route. Setting it marks the document changed.
    public var model: LocusModel {
        get { storedModel }
        set {
            storedModel = newValue
            updateChangeCount(.done)
        }
    }

    /// The part of the map in view. Setting it marks the document changed, so that panning
    /// is autosaved: the seed's fix.
    public var mapRegion: MapRegion {
        get { storedRegion }
        set {
            storedRegion = newValue
            updateChangeCount(.done)
        }
    }

    private var storedModel = LocusModel(name: "Stops")
    private var storedRegion = MapRegion.initial

    /// Archives the model and the region.
    ///
    /// - Throws: ``KeyedArchiveError`` if Foundation cannot produce the archive.
    open override func contents(forType typeName: String) throws -> Any {
        let model = storedModel
        let region = storedRegion
        return try LocusArchive.classes.archive { archiver in
            archiver.encode(model, forKey: LocusArchive.modelKey)
            archiver.encode(region.center.latitude, forKey: LocusArchive.latitudeKey)
            archiver.encode(region.center.longitude, forKey: LocusArchive.longitudeKey)
            archiver.encode(region.span.latitudeDelta, forKey: LocusArchive.latitudeDeltaKey)
            archiver.encode(region.span.longitudeDelta, forKey: LocusArchive.longitudeDeltaKey)
        }
    }

    /// Reads the model and the region from the archive.
    ///
    /// Nothing of the document changes unless the whole archive reads correctly.
    ///
    /// - Throws: ``KeyedArchiveError`` when the contents are not a Locus archive: truncated,
    ///   naming a class other than the document's, missing the model, or with a region off the
    ///   globe. Opening then fails with an error naming the file.
    open override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else {
            throw KeyedArchiveError(.notAKeyedArchive, "a Locus document is a file, not a folder")
        }
        let classes = LocusArchive.classes
        let unarchiver = try classes.unarchiver(for: data)
        let model = unarchiver.decodeObject(of: classes.allowedClasses, forKey: LocusArchive.modelKey)
        let keys = [
            LocusArchive.latitudeKey, LocusArchive.longitudeKey, LocusArchive.latitudeDeltaKey,
            LocusArchive.longitudeDeltaKey,
        ]
        let hasRegion = keys.allSatisfy { unarchiver.containsValue(forKey: $0) }
        let values = keys.map { unarchiver.decodeDouble(forKey: $0) }
        try classes.finish(unarchiver)
        guard let model = model as? LocusModel else {
            throw KeyedArchiveError(
                .missingValue, "the archive has no route under “\(LocusArchive.modelKey)”")
        }
        // An archive without a region (written before the seed added it) opens at the initial one.
        let region =
            hasRegion
            ? MapRegion(
                center: .init(latitude: values[0], longitude: values[1]),
                span: .init(latitudeDelta: values[2], longitudeDelta: values[3]))
            : MapRegion.initial
        guard region.isValid else {
            throw KeyedArchiveError(.invalidValue, "the saved map region is not on the globe (\(region))")
        }
        storedModel = model
        storedRegion = region
    }
}
