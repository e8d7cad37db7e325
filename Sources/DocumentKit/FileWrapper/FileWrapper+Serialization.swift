#if !canImport(ObjectiveC)
    import Foundation

    extension FileWrapper {
    }

    /// The property-list form of a file wrapper tree.
    enum SerializedFileWrapper {
        static let formatKey = "DocumentKitFileWrapper"
        static let formatVersion = 1
        static let rootKey = "root"

        struct Malformed: Error {}

        static func encode(_ wrapper: FileWrapper) -> [String: Any] {
            var node: [String: Any] = [:]
            switch wrapper.contents {
            case .regularFile(let data):
                node["kind"] = "file"
                node["contents"] = data
            case .directory(let children):
                node["kind"] = "directory"
                node["children"] = children.mapValues { encode($0) }
            case .symbolicLink(let destination):
                node["kind"] = "link"
                node["destination"] = destination
            }
            if let name = wrapper.preferredFilename { node["preferredFilename"] = name }
            if let permissions = wrapper.requestedPermissions { node["permissions"] = Int(permissions) }
            if let date = wrapper.requestedModificationDate { node["modificationDate"] = date }
            return node
        }

        static func decode(_ data: Data) throws -> FileWrapper {
            let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            guard let root = plist as? [String: Any], (root[formatKey] as? Int) == formatVersion,
                let node = root[rootKey] as? [String: Any]
            else { throw Malformed() }
            return try decode(node: node, depth: 0)
        }

        private static func decode(node: [String: Any], depth: Int) throws -> FileWrapper {
            // Bytes from elsewhere must not exhaust the stack with absurd nesting.
            guard depth < 256, let kind = node["kind"] as? String else { throw Malformed() }
            var attributes: [String: Any] = [:]
            if let permissions = node["permissions"] as? Int {
                attributes[FileAttributeKey.posixPermissions.rawValue] = NSNumber(value: permissions)
            }
            if let date = node["modificationDate"] as? Date {
                attributes[FileAttributeKey.modificationDate.rawValue] = date
            }
            let contents: FileWrapper.Contents
            switch kind {
            case "file":
                guard let data = node["contents"] as? Data else { throw Malformed() }
                contents = .regularFile(data)
            case "link":
                guard let destination = node["destination"] as? String else { throw Malformed() }
                contents = .symbolicLink(destination)
            case "directory":
                guard let encoded = node["children"] as? [String: Any] else { throw Malformed() }
                var children: [String: FileWrapper] = [:]
                for (key, value) in encoded {
                    guard let child = value as? [String: Any] else { throw Malformed() }
                    children[key] = try decode(node: child, depth: depth + 1)
                }
                contents = .directory(children)
            default:
                throw Malformed()
            }
            let wrapper = FileWrapper(contents: contents, fileAttributes: attributes, diskIdentity: nil)
            wrapper.storedPreferredFilename = node["preferredFilename"] as? String
            return wrapper
        }
    }
#endif
