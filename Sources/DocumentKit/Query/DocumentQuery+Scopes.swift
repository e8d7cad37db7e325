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

    /// The folders that `scopes` name, in order, and the folders to leave out of them.
    ///
    /// The ubiquitous scopes name the configured ubiquity containers
    /// (``UbiquityConfiguration``): `NSMetadataQueryUbiquitousDocumentsScope` the `Documents`
    /// folder of each (made if missing, as iCloud makes it), `NSMetadataQueryUbiquitousDataScope`
    /// everything else in them. With no container configured they name nothing, and a query of
    /// them alone gathers no results, as on a device signed out of iCloud.
    ///
    /// - Throws: ``DocumentKitError`` with `.notSupported` for the scopes that mean the whole
    ///   computer or the network, and `.invalidArgument` for a value that is not a file URL,
    ///   a path or a scope constant.
    static func folders(of scopes: [Scope]) throws -> (folders: [URL], excluded: [URL]) {
        var folders: [URL] = []
        let strings = Set(
            scopes.compactMap { if case .string(let text) = $0 { return text } else { return nil } })
        let containers = (try? UbiquityConfiguration.load())?.containers ?? []
        let documents = containers.map { $0.url.appendingPathComponent("Documents", isDirectory: true) }
        // The data scope alone leaves the documents out, as Apple's does.
        let excluded =
            strings.contains(NSMetadataQueryUbiquitousDataScope)
                && !strings.contains(NSMetadataQueryUbiquitousDocumentsScope) ? documents : []
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
            case .string(NSMetadataQueryUbiquitousDocumentsScope):
                for folder in documents {
                    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    folders.append(folder)
                }
            case .string(NSMetadataQueryUbiquitousDataScope):
                for container in containers {
                    try? FileManager.default.createDirectory(
                        at: container.url, withIntermediateDirectories: true)
                    folders.append(container.url)
                }
            case .string(NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope):
                // Documents of other apps' containers opened by this one: none on Linux.
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
        return (folders, excluded)
    }
}
