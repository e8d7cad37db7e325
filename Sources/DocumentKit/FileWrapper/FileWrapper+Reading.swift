#if !canImport(ObjectiveC)
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    extension FileWrapper {
        /// Options for reading a file wrapper from disk.
        ///
        /// DocumentKit always reads every file at once and never maps files into memory, so a
        /// file wrapper behaves as if both options were given whichever are: once reading
        /// succeeds, nothing done later on disk can make its contents fail or change.
        public struct ReadingOptions: OptionSet, Sendable {
            public let rawValue: UInt
            /// Creates options from their raw value.
            public init(rawValue: UInt) { self.rawValue = rawValue }

            /// Read all contents now rather than when first asked for.
            public static let immediate = ReadingOptions(rawValue: 1 << 0)
            /// Read files into memory instead of mapping them.
            public static let withoutMapping = ReadingOptions(rawValue: 1 << 1)
        }

        static let readOperation = "read file wrapper"

        /// Takes the state of a freshly read node, keeping child objects whose kind matches.
        func update(from read: FileWrapper) {
            if case .directory(let old) = contents, case .directory(let new) = read.contents {
                var merged: [String: FileWrapper] = [:]
                for (name, fresh) in new {
                    if let existing = old[name], existing.sameKind(as: fresh) {
                        existing.update(from: fresh)
                        existing.filename = name
                        merged[name] = existing
                    } else {
                        fresh.removeParent(read)
                        fresh.addParent(self)
                        merged[name] = fresh
                    }
                }
                for (name, child) in old where merged[name] !== child {
                    child.removeParent(self)
                }
                contents = .directory(merged)
            } else {
                if case .directory(let old) = contents {
                    for child in old.values { child.removeParent(self) }
                }
                contents = read.contents
                adoptChildren(of: read)
            }
            fileAttributes = read.fileAttributes
            diskIdentity = read.diskIdentity
        }

        private func sameKind(as other: FileWrapper) -> Bool {
            switch (contents, other.contents) {
            case (.regularFile, .regularFile), (.directory, .directory), (.symbolicLink, .symbolicLink):
                return true
            default: return false
            }
        }

        /// Reads the node at `url`, following a symbolic link there that leads to a node.
        static func readRoot(at url: URL) throws -> FileWrapper {
            guard url.isFileURL else {
                throw DocumentKitError(
                    .invalidArgument, operation: readOperation, url: url, detail: "not a file URL")
            }
            let path = url.path
            // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check rejects it.
            switch Syscall.openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK) {
            case .success(let fd):
                return try readOpened(FileDescriptor(rawValue: fd, url: url))
            case .failure(let error)
            where error == .noSuchFileOrDirectory || error == .tooManySymbolicLinkLevels
                || error == .notDirectory:
                // A link that leads nowhere (to nothing, round in a loop, or through a file)
                // is what is at `url`: Apple's file wrapper reads it as a symbolic link.
                if case .success(let info) = Syscall.fstatat(AT_FDCWD, path, followLinks: false),
                    info.isSymbolicLink
                {
                    let destination = try Syscall.readlinkat(AT_FDCWD, path).get(readOperation, url)
                    return FileWrapper(
                        contents: .symbolicLink(destination), fileAttributes: attributes(of: info),
                        diskIdentity: nil)
                }
                throw DocumentKitError(error, operation: readOperation, url: url)
            case .failure(.noSuchDeviceOrAddress):
                // Opening a socket fails this way; say what the node is.
                if case .success(let info) = Syscall.fstatat(AT_FDCWD, path, followLinks: true) {
                    throw unsupported(info, url: url, errno: .noSuchDeviceOrAddress)
                }
                throw DocumentKitError(.noSuchDeviceOrAddress, operation: readOperation, url: url)
            case .failure(let error):
                throw DocumentKitError(error, operation: readOperation, url: url)
            }
        }

        /// Reads the child `name` of the folder open as `directory`, without following a
        /// symbolic link there.
        private static func readChild(_ name: String, in directory: FileDescriptor, url: URL) throws
            -> FileWrapper
        {
            let info = try Syscall.fstatat(directory.rawValue, name, followLinks: false).get(
                readOperation, url)
            switch info.fileType {
            case S_IFLNK:
                let destination = try Syscall.readlinkat(directory.rawValue, name).get(readOperation, url)
                return FileWrapper(
                    contents: .symbolicLink(destination), fileAttributes: attributes(of: info),
                    diskIdentity: nil)
            case S_IFDIR, S_IFREG:
                // O_NOFOLLOW and O_NONBLOCK: the node may have been swapped for a link or a FIFO
                // since the stat; readOpened checks its type again on the open descriptor.
                let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (info.isDirectory ? O_DIRECTORY : 0)
                let fd = try Syscall.openat(directory.rawValue, name, flags).get(readOperation, url)
                return try readOpened(FileDescriptor(rawValue: fd, url: url))
            default:
                throw unsupported(info, url: url, errno: nil)
            }
        }

        private static func readOpened(_ file: FileDescriptor) throws -> FileWrapper {
            let url = file.url
            let info = try file.stat(operation: readOperation)
            switch info.fileType {
            case S_IFREG:
                let data = try file.readToEnd(sizeHint: Int(info.st_size), operation: readOperation)
                let after = try file.stat(operation: readOperation)
                // A file written while we read it has no trustworthy identity: never hard-link it.
                let identity = FileStatus(info)
                let stable =
                    identity.isSameFileAndContents(as: FileStatus(after))
                    && Int64(data.count) == identity.size
                return FileWrapper(
                    contents: .regularFile(data), fileAttributes: attributes(of: after),
                    diskIdentity: stable ? identity : nil)
            case S_IFDIR:
                let names = try Syscall.directoryNames(in: file.rawValue).get(readOperation, url)
                var children: [String: FileWrapper] = [:]
                for name in names {
                    let child = try readChild(name, in: file, url: url.appendingPathComponent(name))
                    child.filename = name
                    child.storedPreferredFilename = name
                    children[name] = child
                }
                return FileWrapper(
                    contents: .directory(children), fileAttributes: attributes(of: info), diskIdentity: nil)
            default:
                throw unsupported(info, url: url, errno: nil)
            }
        }

        private static func unsupported(_ info: stat, url: URL, errno: Errno?) -> DocumentKitError {
            let kind: String
            switch info.fileType {
            case S_IFSOCK: kind = "a socket"
            case S_IFIFO: kind = "a FIFO (named pipe)"
            case S_IFCHR: kind = "a character device"
            case S_IFBLK: kind = "a block device"
            default: kind = "of an unknown kind"
            }
            return DocumentKitError(
                .unsupportedFileType, operation: readOperation, url: url, errno: errno,
                detail: "it is \(kind); a file wrapper holds only files, folders and symbolic links")
        }

        /// The attributes `FileManager` would report for the node, as far as a file wrapper
        /// uses them.
        static func attributes(of info: stat) -> [String: Any] {
            let type: FileAttributeType
            switch info.fileType {
            case S_IFREG: type = .typeRegular
            case S_IFDIR: type = .typeDirectory
            case S_IFLNK: type = .typeSymbolicLink
            default: type = .typeUnknown
            }
            return [
                FileAttributeKey.type.rawValue: type,
                FileAttributeKey.size.rawValue: NSNumber(value: UInt64(max(info.st_size, 0))),
                FileAttributeKey.posixPermissions.rawValue: NSNumber(value: Int(info.permissions)),
                FileAttributeKey.modificationDate.rawValue: info.modificationDate,
                FileAttributeKey.ownerAccountID.rawValue: NSNumber(value: UInt64(info.st_uid)),
                FileAttributeKey.groupOwnerAccountID.rawValue: NSNumber(value: UInt64(info.st_gid)),
                FileAttributeKey.systemNumber.rawValue: NSNumber(value: UInt64(info.st_dev)),
                FileAttributeKey.systemFileNumber.rawValue: NSNumber(value: UInt64(info.st_ino)),
            ]
        }
    }
#endif
