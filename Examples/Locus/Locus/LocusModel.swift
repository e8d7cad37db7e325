import DocumentKit
import Foundation

/// A place on the map: a stop of the route a Locus document keeps.
public final class LocusStop: NSObject, NSSecureCoding, Sendable {
    /// The stop's name as the user typed it.
    public let name: String
    /// Degrees north of the equator.
    public let latitude: Double
    /// Degrees east of Greenwich.
    public let longitude: Double

    /// Creates a stop.
    public init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(latitude, forKey: "latitude")
        coder.encode(longitude, forKey: "longitude")
    }

    public init?(coder: NSCoder) {
        guard
            let name = coder.decodeObject(of: LocusArchive.classes.allowedClasses, forKey: "name") as? String,
            coder.containsValue(forKey: "latitude"), coder.containsValue(forKey: "longitude")
        else { return nil }
        self.name = name
        latitude = coder.decodeDouble(forKey: "latitude")
        longitude = coder.decodeDouble(forKey: "longitude")
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? LocusStop else { return false }
        return name == other.name && latitude == other.latitude && longitude == other.longitude
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(name)
        hasher.combine(latitude)
        hasher.combine(longitude)
        return hasher.finalize()
    }

    public override var description: String {
        "\(name) (\(String(format: "%.5f, %.5f", latitude, longitude)))"
    }
}

/// The model of a Locus document: a named list of stops.
///
/// Immutable, like the value a view controller is handed; the document replaces it to change it.
public final class LocusModel: NSObject, NSSecureCoding, Sendable {
    /// The route's name.
    public let name: String
    /// The stops in order.
    public let stops: [LocusStop]

    /// Creates a model.
    public init(name: String, stops: [LocusStop] = []) {
        self.name = name
        self.stops = stops
    }

    /// A copy with `stop` added at the end.
    public func adding(_ stop: LocusStop) -> LocusModel {
        LocusModel(name: name, stops: stops + [stop])
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(stops as NSArray, forKey: "stops")
    }

    public init?(coder: NSCoder) {
        let classes = LocusArchive.classes.allowedClasses
        guard let name = coder.decodeObject(of: classes, forKey: "name") as? String,
            let stops = coder.decodeObject(of: classes, forKey: "stops") as? [LocusStop]
        else { return nil }
        self.name = name
        self.stops = stops
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? LocusModel else { return false }
        return name == other.name && stops == other.stops
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(name)
        hasher.combine(stops)
        return hasher.finalize()
    }
}

/// The archive format of a Locus document.
enum LocusArchive {
    /// The classes a Locus archive holds, under names that do not depend on the module.
    static let classes = KeyedArchiveClasses(named: [
        .init("LocusModel", LocusModel.self), .init("LocusStop", LocusStop.self),
    ])

    // The keys of the seed's archive, kept so the format stays the same.
    static let modelKey = "model"
    static let latitudeKey = "StopPickerRegionLat"
    static let longitudeKey = "StopPickerRegionLong"
    static let latitudeDeltaKey = "StopPickerRegionLatDelta"
    static let longitudeDeltaKey = "StopPickerRegionLongDelta"
}
