import DocumentKit
import Foundation

/// One shape of a Symmetry drawing: a kind, its points, a colour, and how many times it is
/// repeated around the centre. A model object of the seed's array.
public final class SymmetryShape: NSObject, NSSecureCoding, Sendable {
    /// The kinds of shape.
    public enum Kind: String, Sendable, CaseIterable {
        case line, circle, polygon, star
    }

    /// A point in the drawing's unit square, the centre at (0.5, 0.5).
    public struct Point: Sendable, Hashable {
        public var x: Double
        public var y: Double

        /// Creates a point.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// A colour, each component from 0 to 1.
    public struct Color: Sendable, Hashable, CustomStringConvertible {
        public var red: Double
        public var green: Double
        public var blue: Double
        public var alpha: Double

        /// Creates a colour.
        public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
            self.red = red
            self.green = green
            self.blue = blue
            self.alpha = alpha
        }

        /// The colour as `#RRGGBB`, with `AA` appended when it is not opaque.
        public var description: String {
            func byte(_ component: Double) -> String {
                String(format: "%02X", Int((min(1, max(0, component)) * 255).rounded()))
            }
            return "#" + byte(red) + byte(green) + byte(blue) + (alpha < 1 ? byte(alpha) : "")
        }
    }

    /// What is drawn.
    public let kind: Kind
    /// The points that define it: ends of a line, centre and a point on a circle, corners.
    public let points: [Point]
    /// Its colour.
    public let color: Color
    /// How many copies are drawn around the centre, at equal angles: the symmetry.
    public let folds: Int

    /// Creates a shape.
    public init(kind: Kind, points: [Point], color: Color, folds: Int = 1) {
        self.kind = kind
        self.points = points
        self.color = color
        self.folds = max(1, folds)
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(kind.rawValue, forKey: "kind")
        // Points as one flat array of coordinates: x0, y0, x1, y1, ...
        let coordinates = points.flatMap { [NSNumber(value: $0.x), NSNumber(value: $0.y)] }
        coder.encode(coordinates as NSArray, forKey: "points")
        coder.encode(color.red, forKey: "red")
        coder.encode(color.green, forKey: "green")
        coder.encode(color.blue, forKey: "blue")
        coder.encode(color.alpha, forKey: "alpha")
        coder.encode(folds, forKey: "folds")
    }

    public init?(coder: NSCoder) {
        let classes = SymmetryArchive.classes.allowedClasses
        guard let kindName = coder.decodeObject(of: classes, forKey: "kind") as? String,
            let kind = Kind(rawValue: kindName),
            let coordinates = coder.decodeObject(of: classes, forKey: "points") as? [NSNumber],
            coordinates.count.isMultiple(of: 2)
        else { return nil }
        let values = coordinates.map(\.doubleValue)
        guard values.allSatisfy(\.isFinite) else { return nil }
        self.kind = kind
        points = stride(from: 0, to: values.count, by: 2).map { Point(x: values[$0], y: values[$0 + 1]) }
        color = Color(
            red: coder.decodeDouble(forKey: "red"), green: coder.decodeDouble(forKey: "green"),
            blue: coder.decodeDouble(forKey: "blue"),
            alpha: coder.containsValue(forKey: "alpha") ? coder.decodeDouble(forKey: "alpha") : 1)
        folds = max(1, coder.decodeInteger(forKey: "folds"))
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SymmetryShape else { return false }
        return kind == other.kind && points == other.points && color == other.color && folds == other.folds
    }

    public override var hash: Int {
        var hasher = Hasher()
        hasher.combine(kind)
        hasher.combine(points)
        hasher.combine(color)
        hasher.combine(folds)
        return hasher.finalize()
    }

    public override var description: String {
        "\(kind.rawValue), \(points.count) point\(points.count == 1 ? "" : "s"), \(color), \(folds)-fold"
    }

    /// A shape for the `number`th addition to a drawing, so that a demo draws something
    /// different each time and the same thing on every machine.
    public static func example(number: Int) -> SymmetryShape {
        let kinds = Kind.allCases
        let kind = kinds[number % kinds.count]
        let palette = [
            Color(red: 0.85, green: 0.2, blue: 0.2), Color(red: 0.2, green: 0.55, blue: 0.85),
            Color(red: 0.25, green: 0.7, blue: 0.3), Color(red: 0.95, green: 0.75, blue: 0.1),
            Color(red: 0.55, green: 0.3, blue: 0.75),
        ]
        let radius = 0.1 + 0.05 * Double(number % 6)
        let angle = Double(number) * 0.7
        let corner = Point(x: 0.5 + radius * cos(angle), y: 0.5 + radius * sin(angle))
        let points: [Point]
        switch kind {
        case .line, .circle:
            points = [Point(x: 0.5, y: 0.5), corner]
        case .polygon, .star:
            let count = kind == .polygon ? 3 + number % 4 : 5
            points = (0..<count).map { index in
                let theta = angle + 2 * Double.pi * Double(index) / Double(count)
                return Point(x: 0.5 + radius * cos(theta), y: 0.5 + radius * sin(theta))
            }
        }
        return SymmetryShape(
            kind: kind, points: points, color: palette[number % palette.count], folds: 2 + number % 5)
    }
}

/// The archive format of `Symmetry.archive`.
enum SymmetryArchive {
    /// The classes the archive holds, under names that do not depend on the module.
    static let classes = KeyedArchiveClasses(named: [.init("SymmetryShape", SymmetryShape.self)])
}
