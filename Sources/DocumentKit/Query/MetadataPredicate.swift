import Foundation

/// A predicate format string over metadata attributes, parsed once and then evaluated
/// against each item: what `NSPredicate(metadataFormat:)` runs.
///
/// The grammar is `NSPredicate(format:)`'s, as Spotlight queries use it over item
/// attributes. An attribute with several values (`NSMetadataItemContentTypeTreeKey`)
/// matches when one of its values does, as in Spotlight, except that `!=` holds when none
/// is equal; `ANY`, `ALL` and `NONE` say which explicitly.
struct MetadataPredicate: Sendable {
    indirect enum Node: Sendable {
        case constant(Bool)
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
        case comparison(Comparison)
    }

    struct Options: Sendable, Equatable {
        var caseInsensitive = false
        var diacriticInsensitive = false
    }

    enum Operator: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case like = "LIKE"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case matches = "MATCHES"
        case isIn = "IN"
        case between = "BETWEEN"
        case conformsToType = "UTI-CONFORMS-TO"
        case equalsType = "UTI-EQUALS"
    }

    /// `ANY` (or `SOME`), `ALL`, `NONE`.
    enum Quantifier: Sendable {
        case anyElement, everyElement, noElement
    }

    /// What a key path may do to an attribute's value after its name, as key-value coding
    /// does on Apple platforms (`%K.pathExtension` with `NSMetadataItemURLKey`).
    enum Step: String, Sendable, CaseIterable {
        case pathExtension
        case lastPathComponent
        case deletingPathExtension
        case stringByDeletingPathExtension
        case path
        case length
        case count = "@count"
    }

    indirect enum Expression: Sendable {
        case attribute(String, steps: [Step])
        case constant(MetadataValue)
        case aggregate([Expression])
    }

    struct Comparison: Sendable {
        var quantifier: Quantifier?
        var left: Expression
        var op: Operator
        var options: Options
        var right: Expression
        /// The compiled pattern of `MATCHES`, whose right side is always a constant.
        var expression: DocumentQuery.Unchecked<NSRegularExpression>?
    }

    let root: Node
    let format: String

    /// Whether `object` (a ``DocumentQuery/Item``, or a dictionary of attribute values)
    /// satisfies the predicate.
    func evaluate(_ object: Any?) -> Bool {
        Self.evaluate(root, object)
    }

    private static func evaluate(_ node: Node, _ object: Any?) -> Bool {
        switch node {
        case .constant(let value): return value
        case .not(let node): return !evaluate(node, object)
        case .and(let a, let b): return evaluate(a, object) && evaluate(b, object)
        case .or(let a, let b): return evaluate(a, object) || evaluate(b, object)
        case .comparison(let comparison): return evaluate(comparison, object)
        }
    }

    private static func evaluate(_ comparison: Comparison, _ object: Any?) -> Bool {
        let left = value(of: comparison.left, object)
        let right = value(of: comparison.right, object)
        let test = { (value: MetadataValue, op: Operator) in
            holds(op, value, right, comparison.options, comparison.expression?.value)
        }
        if let quantifier = comparison.quantifier {
            let values: [MetadataValue]
            if case .array(let elements) = left { values = elements } else { values = [left] }
            switch quantifier {
            case .anyElement: return values.contains { test($0, comparison.op) }
            case .everyElement: return values.allSatisfy { test($0, comparison.op) }
            case .noElement: return !values.contains { test($0, comparison.op) }
            }
        }
        let op = comparison.op
        // Spotlight's rule for attributes with several values; two arrays compare as wholes.
        if case .array(let values) = left, !(isArray(right) && (op == .equal || op == .notEqual)) {
            if op == .notEqual { return !values.contains { test($0, .equal) } }
            return values.contains { test($0, op) }
        }
        return test(left, comparison.op)
    }

    private static func isArray(_ value: MetadataValue) -> Bool {
        if case .array = value { return true }
        return false
    }

    // MARK: Values

    static func value(of expression: Expression, _ object: Any?) -> MetadataValue {
        switch expression {
        case .constant(let value): return value
        case .aggregate(let expressions): return .array(expressions.map { value(of: $0, object) })
        case .attribute(let key, let steps):
            var value = attribute(key, of: object)
            for step in steps { value = apply(step, to: value) }
            return value
        }
    }

    /// The value of the attribute `key` of `object`: an item's, read without boxing for the
    /// attributes items have, or a dictionary's entry.
    static func attribute(_ key: String, of object: Any?) -> MetadataValue {
        if let item = object as? DocumentQuery.Item {
            switch key {
            case NSMetadataItemFSNameKey: return .string(item.fileName)
            case NSMetadataItemDisplayNameKey: return .string(item.displayName)
            case NSMetadataItemPathKey: return .string(item.path)
            case NSMetadataItemURLKey: return .url(item.url)
            case NSMetadataItemFSSizeKey: return .integer(Int64(item.fileSize))
            case NSMetadataItemFSCreationDateKey: return item.creationDate.map(MetadataValue.date) ?? .null
            case NSMetadataItemFSContentChangeDateKey: return .date(item.modificationDate)
            case NSMetadataItemContentTypeKey: return .string(item.contentType)
            case NSMetadataItemContentTypeTreeKey:
                return .array(item.contentTypeTree.map(MetadataValue.string))
            case NSMetadataUbiquitousItemHasUnresolvedConflictsKey:
                return .integer(item.hasUnresolvedConflicts ? 1 : 0)
            default: return MetadataValue(item.value(forAttribute: key)) ?? .null
            }
        }
        if let attributes = object as? [String: Any] { return MetadataValue(attributes[key]) ?? .null }
        return .null
    }

    private static func apply(_ step: Step, to value: MetadataValue) -> MetadataValue {
        switch (step, value) {
        case (.count, .array(let values)): return .integer(Int64(values.count))
        case (_, .array(let values)): return .array(values.map { apply(step, to: $0) })
        case (.pathExtension, .string(let string)): return .string(NSString(string: string).pathExtension)
        case (.pathExtension, .url(let url)): return .string(url.pathExtension)
        case (.lastPathComponent, .string(let string)):
            return .string(NSString(string: string).lastPathComponent)
        case (.lastPathComponent, .url(let url)): return .string(url.lastPathComponent)
        case (.deletingPathExtension, .string(let string)),
            (.stringByDeletingPathExtension, .string(let string)):
            return .string(NSString(string: string).deletingPathExtension)
        case (.deletingPathExtension, .url(let url)): return .url(url.deletingPathExtension())
        case (.stringByDeletingPathExtension, .url(let url)):
            return .string(NSString(string: url.path).deletingPathExtension)
        case (.path, .url(let url)): return .string(url.path)
        case (.path, .string): return value
        case (.length, .string(let string)): return .integer(Int64(string.utf16.count))
        default: return .null
        }
    }

    // MARK: Operators

    private static func holds(
        _ op: Operator, _ left: MetadataValue, _ right: MetadataValue, _ options: Options,
        _ expression: NSRegularExpression?
    ) -> Bool {
        switch op {
        case .equal: return left.isEqual(to: right, options)
        case .notEqual: return !left.isEqual(to: right, options)
        case .less: return left.order(right, options) == .orderedAscending
        case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(left.order(right, options))
        case .greater: return left.order(right, options) == .orderedDescending
        case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(left.order(right, options))
        case .between:
            guard case .array(let bounds) = right, bounds.count == 2,
                let low = left.order(bounds[0], options), let high = left.order(bounds[1], options)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .isIn:
            switch right {
            case .array(let values): return values.contains { left.isEqual(to: $0, options) }
            case .string:
                guard let needle = left.text(options), let haystack = right.text(options), !needle.isEmpty
                else { return false }
                return haystack.contains(needle)
            default: return false
            }
        case .beginsWith, .endsWith, .contains, .like:
            guard let subject = left.text(options), let pattern = right.text(options) else { return false }
            switch op {
            case .like: return like(Array(subject), Array(pattern))
            // As NSString answers: an empty string begins, ends and contains nothing.
            case .beginsWith: return !pattern.isEmpty && subject.hasPrefix(pattern)
            case .endsWith: return !pattern.isEmpty && subject.hasSuffix(pattern)
            default: return !pattern.isEmpty && subject.contains(pattern)
            }
        case .matches:
            guard let expression, let subject = left.text(options) else { return false }
            let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
            return expression.firstMatch(in: subject, options: [.anchored], range: range) != nil
        case .conformsToType, .equalsType:
            guard case .string(let type) = left, case .string(let other) = right else { return false }
            let same = { (a: String) in a.caseInsensitiveCompare(other) == .orderedSame }
            return op == .equalsType
                ? same(type) : DocumentQuery.Item.typeTree(of: type).contains(where: same)
        }
    }

    /// `LIKE`: `*` matches any run of characters, `?` any one character, and a backslash
    /// makes the next character literal.
    static func like(_ subject: [Character], _ pattern: [Character]) -> Bool {
        var s = 0
        var p = 0
        // Where the last `*` was, and how much of the subject it has taken: on a mismatch it
        // takes one character more.
        var star: (pattern: Int, subject: Int)?
        while s < subject.count {
            if p < pattern.count {
                switch pattern[p] {
                case "*":
                    star = (p, s)
                    p += 1
                    continue
                case "?":
                    s += 1
                    p += 1
                    continue
                case "\\" where p + 1 < pattern.count:
                    if pattern[p + 1] == subject[s] {
                        s += 1
                        p += 2
                        continue
                    }
                case let character where character == subject[s]:
                    s += 1
                    p += 1
                    continue
                default: break
                }
            }
            guard let last = star else { return false }
            star = (last.pattern, last.subject + 1)
            p = last.pattern + 1
            s = last.subject + 1
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

/// A value a predicate compares: an attribute's or a constant's.
enum MetadataValue: Sendable {
    case null
    case string(String)
    case integer(Int64)
    case real(Double)
    case date(Date)
    case url(URL)
    case array([MetadataValue])

    /// The value of a Foundation object, an argument or an attribute value; nil for a type
    /// predicates do not compare.
    init?(_ object: Any?) {
        guard let object = Self.unwrapped(object) else {
            self = .null
            return
        }
        switch object {
        case is NSNull: self = .null
        case let string as String: self = .string(string)
        case let url as URL: self = .url(url)
        case let date as Date: self = .date(date)
        case let number as NSNumber:
            // Bridging makes every Swift number (and Bool) an NSNumber.
            switch String(cString: number.objCType) {
            case "f", "d": self = .real(number.doubleValue)
            case "Q", "L", "I", "S", "C":
                let value = number.uint64Value
                self = value > UInt64(Int64.max) ? .real(Double(value)) : .integer(Int64(value))
            default: self = .integer(number.int64Value)
            }
        case let array as [Any]:
            guard let values = Self.values(of: array) else { return nil }
            self = .array(values)
        case let set as Set<AnyHashable>:
            guard let values = Self.values(of: set.map(\.base)) else { return nil }
            self = .array(values)
        default: return nil
        }
    }

    private static func values(of elements: [Any]) -> [MetadataValue]? {
        var values: [MetadataValue] = []
        for element in elements {
            guard let value = MetadataValue(element) else { return nil }
            values.append(value)
        }
        return values
    }

    /// `object` with any levels of `Optional` removed; nil for an empty one.
    static func unwrapped(_ object: Any?) -> Any? {
        guard let object else { return nil }
        let mirror = Mirror(reflecting: object)
        guard mirror.displayStyle == .optional else { return object }
        return mirror.children.first.flatMap { unwrapped($0.value) }
    }

    /// The value as text for the string operators, folded as `options` say; a URL reads as
    /// its path.
    func text(_ options: MetadataPredicate.Options) -> String? {
        let text: String
        switch self {
        case .string(let string): text = string
        case .url(let url): text = url.path
        default: return nil
        }
        var folding: String.CompareOptions = []
        if options.caseInsensitive { folding.insert(.caseInsensitive) }
        if options.diacriticInsensitive { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? text : text.folding(options: folding, locale: nil)
    }

    func isEqual(to other: MetadataValue, _ options: MetadataPredicate.Options) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.url(let a), .url(let b)): return a.standardizedFileURL.path == b.standardizedFileURL.path
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEqual(to: $1, options) }
        default: return order(other, options) == .orderedSame
        }
    }

    /// How the value orders before `other`; nil when the two cannot be compared (a number
    /// and a date, anything and nothing).
    func order(_ other: MetadataValue, _ options: MetadataPredicate.Options) -> ComparisonResult? {
        func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        switch (self, other) {
        case (.integer(let a), .integer(let b)): return compare(a, b)
        case (.integer(let a), .real(let b)): return compare(Double(a), b)
        case (.real(let a), .integer(let b)): return compare(a, Double(b))
        case (.real(let a), .real(let b)): return compare(a, b)
        case (.date(let a), .date(let b)): return compare(a, b)
        case (.string, .string), (.url, .string), (.string, .url), (.url, .url):
            guard let a = text(options), let b = other.text(options) else { return nil }
            return compare(a, b)
        default: return nil
        }
    }

    /// A total order of any two values, for sorting: values that cannot be compared order
    /// by kind, nothing first.
    func sortOrder(_ other: MetadataValue) -> ComparisonResult {
        if let order = order(other, MetadataPredicate.Options()) { return order }
        if case .array(let a) = self, case .array(let b) = other {
            for (x, y) in zip(a, b) {
                let order = x.sortOrder(y)
                if order != .orderedSame { return order }
            }
            return a.count < b.count
                ? .orderedAscending : (a.count == b.count ? .orderedSame : .orderedDescending)
        }
        let (a, b) = (kindRank, other.kindRank)
        return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    private var kindRank: Int {
        switch self {
        case .null: return 0
        case .integer, .real: return 1
        case .date: return 2
        case .string, .url: return 3
        case .array: return 4
        }
    }
}
