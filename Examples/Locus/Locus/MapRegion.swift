import Foundation

/// The part of the map on screen: a centre and how far the view spans around it, in degrees,
/// shaped like MapKit's `MKCoordinateRegion` so the seed's code ports unchanged.
///
/// For example:
///
/// ```swift
/// var region = document.mapRegion
/// region.center.latitude += 0.01          // the user dragged the map north
/// document.mapRegion = region             // dirty now, autosaved shortly
/// ```
public struct MapRegion: Sendable, Hashable {
    /// A point on the globe, like `CLLocationCoordinate2D`.
    public struct Coordinate: Sendable, Hashable {
        /// Degrees north of the equator, -90 to 90.
        public var latitude: Double
        /// Degrees east of Greenwich, -180 to 180.
        public var longitude: Double

        /// Creates a coordinate.
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// How much of the map is in view, like `MKCoordinateSpan`.
    public struct Span: Sendable, Hashable {
        /// The height of the view, in degrees of latitude.
        public var latitudeDelta: Double
        /// The width of the view, in degrees of longitude.
        public var longitudeDelta: Double

        /// Creates a span.
        public init(latitudeDelta: Double, longitudeDelta: Double) {
            self.latitudeDelta = latitudeDelta
            self.longitudeDelta = longitudeDelta
        }
    }

    /// The centre of the view.
    public var center: Coordinate
    /// The extent of the view.
    public var span: Span

    /// Creates a region.
    public init(center: Coordinate, span: Span) {
        self.center = center
        self.span = span
    }

    /// Where a new document's map starts: downtown Seattle, where the Omni frameworks live.
    public static let initial = MapRegion(
        center: Coordinate(latitude: 47.6062, longitude: -122.3321),
        span: Span(latitudeDelta: 0.05, longitudeDelta: 0.05))

    /// The region after the user drags the map by the given degrees: latitude stops at the
    /// poles and longitude wraps around the date line, as a map view does.
    public func panned(latitude deltaLatitude: Double, longitude deltaLongitude: Double) -> MapRegion {
        var moved = self
        moved.center.latitude = min(90, max(-90, center.latitude + deltaLatitude))
        var longitude = (center.longitude + deltaLongitude).truncatingRemainder(dividingBy: 360)
        if longitude > 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        moved.center.longitude = longitude
        return moved
    }

    /// Whether the values are finite and on the globe, as a map view requires.
    public var isValid: Bool {
        [center.latitude, center.longitude, span.latitudeDelta, span.longitudeDelta].allSatisfy(\.isFinite)
            && abs(center.latitude) <= 90 && abs(center.longitude) <= 180
            && span.latitudeDelta >= 0 && span.longitudeDelta >= 0
    }
}

extension MapRegion: CustomStringConvertible {
    public var description: String {
        String(
            format: "centre %.5f, %.5f; span %.5f x %.5f", center.latitude, center.longitude,
            span.latitudeDelta, span.longitudeDelta)
    }
}
