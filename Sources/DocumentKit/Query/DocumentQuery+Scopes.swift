import Foundation

extension DocumentQuery {
    /// A value Foundation does not mark `Sendable` (`NSPredicate`, `NSSortDescriptor`, an
    /// arbitrary search scope), kept as it was given.
    ///
    /// Unchecked: the query never mutates it. Predicates and sort descriptors are immutable
    /// once made (their blocks and comparators run on the query's private queue, as the
    /// properties' documentation says); other values are only handed back.
    struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }

    /// One element of ``searchScopes``, as it was set.
    enum Scope: Sendable {
        case url(URL)
        /// A path, or one of the scope constants such as `NSMetadataQueryUserHomeScope`.
        case string(String)
        /// Anything else: refused by ``start()``, handed back by ``searchScopes``.
        case other(Unchecked<Any>)

        init(_ value: Any) {
            // `as?` bridges NSURL and NSString too.
            if let url = value as? URL {
                self = .url(url)
            } else if let string = value as? String {
                self = .string(string)
            } else {
                self = .other(Unchecked(value: value))
            }
        }

        var value: Any {
            switch self {
            case .url(let url): return url
            case .string(let string): return string
            case .other(let other): return other.value
            }
        }
    }

    /// The folders that `scopes` name, in order.
    ///
    /// The ubiquitous scopes name no folder yet: until a sync engine provides ubiquity
    /// containers, a query of them alone gathers no results, as on a device signed out of
    /// iCloud.
    ///
    /// - Throws: ``DocumentKitError`` with `.notSupported` for the scopes that mean the whole
    ///   computer or the network, and `.invalidArgument` for a value that is not a file URL,
    ///   a path or a scope constant.
    static func folders(of scopes: [Scope]) throws -> [URL] {
        var folders: [URL] = []
        for scope in scopes {
            switch scope {
            case .url(let url):
                guard url.isFileURL else {
                    throw DocumentKitError(
                        DocumentKitError.Code.invalidArgument, operation: "start query", url: nil,
                        detail: "the search scope \(url.absoluteString) is not a file URL")
                }
                folders.append(url)
            case .string(NSMetadataQueryUserHomeScope):
                folders.append(URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true))
            case .string(NSMetadataQueryUbiquitousDocumentsScope),
                .string(NSMetadataQueryUbiquitousDataScope),
                .string(NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope):
                break
            case .string(let constant)
            where [
                NSMetadataQueryLocalComputerScope, NSMetadataQueryNetworkScope,
                NSMetadataQueryIndexedLocalComputerScope, NSMetadataQueryIndexedNetworkScope,
            ].contains(constant):
                throw DocumentKitError(
                    DocumentKitError.Code.notSupported, operation: "start query", url: nil,
                    detail:
                        "the search scope \(constant) is not supported: Linux has no index of the whole "
                        + "computer or network, and a query watches every folder it searches; search the "
                        + "folders you need, or NSMetadataQueryUserHomeScope")
            case .string(let path):
                guard !path.isEmpty else {
                    throw DocumentKitError(
                        DocumentKitError.Code.invalidArgument, operation: "start query", url: nil,
                        detail: "a search scope is an empty path")
                }
                folders.append(URL(fileURLWithPath: path, isDirectory: true))
            case .other(let other):
                throw DocumentKitError(
                    DocumentKitError.Code.invalidArgument, operation: "start query", url: nil,
                    detail:
                        "a search scope must be a file URL, a path or a scope constant such as "
                        + "NSMetadataQueryUserHomeScope, not a \(type(of: other.value))")
            }
        }
        return folders
    }
}
