import Foundation

/// Why a keyed archive could not be read or written.
///
/// The message names what was wrong in the archive; the document that throws it adds the file.
public struct KeyedArchiveError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem the archive has.
    public enum Code: Sendable, Hashable {
        /// The bytes are not a keyed archive at all: truncated, empty, or another format.
        case notAKeyedArchive
        /// The archive names a class this document never stores.
        case unexpectedClass
        /// A value the document needs is missing.
        case missingValue
        /// A value is present but unusable (wrong type, out of range).
        case invalidValue
        /// Foundation failed to archive the document's objects.
        case encodingFailed
    }

    /// What kind of problem the archive has.
    public var code: Code
    /// The problem, in words.
    public var detail: String

    /// Creates an error.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { detail }
}

/// The classes a document's keyed archive may contain, under the names it stores them by.
///
/// Foundation on Linux has two traps that this works around, so that an archive is stable
/// across platforms and a bad one is an error rather than a crash:
///
/// - `NSKeyedArchiver.setClassName(_:for:)` records the mapping under a key that encoding
///   never looks up, so Swift classes are stored under module-qualified names
///   ("MyApp.Model"). After encoding, those names are rewritten to the stable ones.
/// - With `requiresSecureCoding`, an archive naming a class that exists but is not allowed
///   stops the process with `fatalError`, whatever the `decodingFailurePolicy`. So the
///   archive's class table is checked against ``allowedClasses`` before decoding starts,
///   and every decode passes the whole list, so Foundation never meets a class it rejects.
///
/// For example:
///
/// ```swift
/// let classes = KeyedArchiveClasses(named: [.init("LocusModel", LocusModel.self)])
/// let data = try classes.archive { $0.encode(model, forKey: "model") }
/// let unarchiver = try classes.unarchiver(for: data)
/// let model = unarchiver.decodeObject(of: classes.allowedClasses, forKey: "model") as? LocusModel
/// try classes.finish(unarchiver)
/// ```
// Immutable: class objects are not Sendable only by type, and nothing here changes after init.
public struct KeyedArchiveClasses: @unchecked Sendable {
    /// A class and the name an archive stores it under.
    public struct NamedClass: @unchecked Sendable {
        /// The name the archive stores the class under.
        public let name: String
        /// The class.
        public let type: AnyClass

        /// Pairs a class with its stable archive name.
        public init(_ name: String, _ type: AnyClass) {
            self.name = name
            self.type = type
        }
    }

    /// The app's own classes and the stable names they are archived under.
    public let named: [NamedClass]

    /// Describes the classes an archive may contain.
    public init(named: [NamedClass]) {
        self.named = named
    }

    /// Foundation classes the archive may name: arrays. Strings and numbers are stored inline
    /// and never named, so an archive that names them is refused.
    public static let foundation = [
        NamedClass("NSArray", NSArray.self), NamedClass("NSMutableArray", NSMutableArray.self),
    ]

    /// Every class a decode may produce; pass it to every `decodeObject(of:forKey:)`.
    public var allowedClasses: [AnyClass] {
        named.map(\.type) + Self.foundation.map(\.type) + [NSString.self, NSNumber.self]
    }

    /// The names accepted when reading: stable names, Foundation's names, and the
    /// module-qualified names that archives written without the rewrite carry.
    private var readableNames: [String: AnyClass] {
        var names: [String: AnyClass] = [:]
        for entry in Self.foundation { names[entry.name] = entry.type }
        for entry in named {
            names[entry.name] = entry.type
            names[String(reflecting: entry.type)] = entry.type
        }
        return names
    }

    /// Archives with secure coding, the way the document's `contents(forType:)` needs it.
    ///
    /// - Parameter encode: Encodes the document's values into the archiver.
    /// - Returns: A binary property-list keyed archive that uses the stable class names.
    /// - Throws: ``KeyedArchiveError`` if the archive cannot be produced.
    public func archive(_ encode: (NSKeyedArchiver) -> Void) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        for entry in named { archiver.setClassName(entry.name, for: entry.type) }
        encode(archiver)
        archiver.finishEncoding()
        return try stabilizingClassNames(archiver.encodedData)
    }

    /// Returns an unarchiver for `data`, after checking that every class it names is allowed.
    ///
    /// The unarchiver requires secure coding and sets an error instead of raising, so decode
    /// with ``allowedClasses`` and check `error` afterwards (``finish(_:)`` does).
    ///
    /// - Throws: ``KeyedArchiveError`` when `data` is not a keyed archive or names a class
    ///   outside ``allowedClasses``.
    public func unarchiver(for data: Data) throws -> NSKeyedUnarchiver {
        let objects = try Self.objects(of: data)
        let readable = readableNames
        for case let entry as [String: Any] in objects {
            // Any dictionary Foundation could take for a class description must name a class of
            // ours: it resolves names (and hints) it is not given through NSClassFromString.
            guard entry["$classname"] != nil || entry["$classes"] != nil || entry["$classhints"] != nil
            else { continue }
            guard let name = entry["$classname"] as? String else {
                throw KeyedArchiveError(.notAKeyedArchive, "a class entry in the archive has no class name")
            }
            guard readable[name] != nil else {
                throw KeyedArchiveError(
                    .unexpectedClass,
                    "the archive contains an object of class “\(name)”, which this document never stores")
            }
        }
        let unarchiver: NSKeyedUnarchiver
        do {
            unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        } catch {
            throw KeyedArchiveError(.notAKeyedArchive, "it is not a keyed archive (\(Self.reason(error)))")
        }
        unarchiver.requiresSecureCoding = true
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        for entry in readable { unarchiver.setClass(entry.value, forClassName: entry.key) }
        return unarchiver
    }

    /// Finishes decoding and throws the error the unarchiver recorded, if any.
    public func finish(_ unarchiver: NSKeyedUnarchiver) throws {
        unarchiver.finishDecoding()
        if let error = unarchiver.error {
            throw KeyedArchiveError(.invalidValue, "the archive could not be decoded (\(Self.reason(error)))")
        }
    }

    /// The `$objects` table of a keyed archive.
    private static func objects(of data: Data) throws -> [Any] {
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            let what = data.isEmpty ? "the file is empty" : "it is not a keyed archive, or it is cut short"
            throw KeyedArchiveError(.notAKeyedArchive, "\(what) (\(reason(error)))")
        }
        guard let root = plist as? [String: Any], root["$archiver"] as? String == "NSKeyedArchiver",
            let objects = root["$objects"] as? [Any], root["$top"] is [String: Any]
        else {
            throw KeyedArchiveError(.notAKeyedArchive, "it is not a keyed archive")
        }
        return objects
    }

    /// Rewrites module-qualified class names to the stable ones.
    private func stabilizingClassNames(_ data: Data) throws -> Data {
        var renames: [String: String] = [:]
        for entry in named { renames[String(reflecting: entry.type)] = entry.name }
        do {
            guard
                var root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                    as? [String: Any], var objects = root["$objects"] as? [Any]
            else { throw KeyedArchiveError(.encodingFailed, "the archiver produced no object table") }
            var changed = false
            for index in objects.indices {
                guard var entry = objects[index] as? [String: Any], let name = entry["$classname"] as? String,
                    let stable = renames[name]
                else { continue }
                entry["$classname"] = stable
                if let classes = entry["$classes"] as? [String] {
                    entry["$classes"] = classes.map { renames[$0] ?? $0 }
                }
                objects[index] = entry
                changed = true
            }
            guard changed else { return data }
            root["$objects"] = objects
            return try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        } catch let error as KeyedArchiveError {
            throw error
        } catch {
            throw KeyedArchiveError(
                .encodingFailed, "the archive could not be written (\(Self.reason(error)))")
        }
    }

    /// A short reason from a Foundation error, whose Linux description is a dump of its user info.
    public static func reason(_ error: any Error) -> String {
        let userInfo = (error as NSError).userInfo
        return userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
    }
}
