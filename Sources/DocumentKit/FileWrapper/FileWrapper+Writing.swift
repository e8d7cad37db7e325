#if !canImport(ObjectiveC)
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    extension FileWrapper {
        /// Options for writing a file wrapper to disk.
        public struct WritingOptions: OptionSet, Sendable {
            public let rawValue: UInt
            /// Creates options from their raw value.
            public init(rawValue: UInt) { self.rawValue = rawValue }

            /// Write so that the node at the URL is replaced whole or not at all.
            ///
            /// A regular file is written with ``SafeSave/write(_:to:options:permissions:)`` and a
            /// directory with ``SafeSave/writeDirectory(at:options:_:)``: a crash at any instant
            /// leaves the old node or the new one, and everything is flushed to disk.
            public static let atomic = WritingOptions(rawValue: 1 << 0)
            /// After a successful write, set ``FileWrapper/filename`` of this file wrapper and
            /// every descendant to the name it was written under.
            ///
            /// Later writes that pass this location as `originalContentsURL` find unchanged
            /// children by these names.
            public static let withNameUpdating = WritingOptions(rawValue: 1 << 1)
        }

        static let writeOperation = "write file wrapper"

        /// What a successful write teaches the written file wrappers: the names they were
        /// written under and where their bytes now are. Applied only once the whole write has
        /// succeeded, so a failed write never leaves a file wrapper pointing at a deleted file.
        struct WriteSession {
            var names: [(FileWrapper, String)] = []
            var identities: [(FileWrapper, FileStatus)] = []

            func commit(updatingNames: Bool) {
                for (wrapper, identity) in identities { wrapper.diskIdentity = identity }
                if updatingNames {
                    for (wrapper, name) in names { wrapper.filename = name }
                }
            }
        }

        // MARK: - Validation

        func validate(url: URL, ancestors: inout Set<ObjectIdentifier>) throws {
            guard case .directory(let children) = contents else { return }
            guard ancestors.insert(ObjectIdentifier(self)).inserted else {
                throw DocumentKitError(
                    .invalidArgument, operation: Self.writeOperation, url: url,
                    detail: "the directory file wrapper contains itself")
            }
            defer { ancestors.remove(ObjectIdentifier(self)) }
            for (key, child) in children {
                guard Self.isValidName(key) else {
                    throw DocumentKitError(
                        .invalidArgument, operation: Self.writeOperation, url: url,
                        detail: "“\(key)” is not a valid file name for a child")
                }
                try child.validate(url: url.appendingPathComponent(key), ancestors: &ancestors)
            }
        }

        static func isValidName(_ name: String) -> Bool {
            !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
                && name.utf8.count <= 255
        }

        // MARK: - Attributes to apply

        var requestedPermissions: mode_t? {
            guard let value = fileAttributes[FileAttributeKey.posixPermissions.rawValue] else { return nil }
            if let number = value as? NSNumber { return mode_t(number.intValue & 0o7777) }
            if let number = value as? Int { return mode_t(number & 0o7777) }
            return nil
        }

        var requestedModificationDate: Date? {
            fileAttributes[FileAttributeKey.modificationDate.rawValue] as? Date
        }

        /// The modification time to give the written file, to the nanosecond.
        ///
        /// A `Date` near today is only precise to a few hundred nanoseconds, so the date read
        /// from a file does not convert back to its exact time; when it is that date, the exact
        /// time recorded at reading is used, so that unchanged files keep their time exactly.
        var requestedModificationTime: timespec? {
            guard let date = requestedModificationDate else { return nil }
            if let identity = diskIdentity {
                let recorded = identity.modification
                if abs(date.timeIntervalSince1970 - recorded.date.timeIntervalSince1970) < 1e-6 {
                    return recorded.timespec
                }
            }
            return timespec(date)
        }

        // MARK: - Atomic

        func writeAtomically(to url: URL, original: FileDescriptor?, session: inout WriteSession) throws {
            switch contents {
            case .regularFile(let data):
                let time = requestedModificationTime
                try SafeSave.write(to: url, permissions: requestedPermissions) { file in
                    try file.write(data)
                    if let time {
                        _ = try Syscall.futimens(file.descriptor.rawValue, modification: time)
                            .get("set the modification date of", url)
                    }
                }
                if case .success(let info) = Syscall.fstatat(AT_FDCWD, url.path, followLinks: true) {
                    session.identities.append((self, FileStatus(info)))
                }
            case .directory(let children):
                let options: SafeSave.Options = original == nil ? [] : .linkedFilesAreDurable
                try SafeSave.writeDirectory(at: url, options: options) { staging in
                    let directory = try FileDescriptor.openDirectory(staging, operation: Self.writeOperation)
                    for (key, child) in children {
                        try Self.write(
                            child, named: key, in: directory, url: url.appendingPathComponent(key),
                            original: original, inPlace: false, session: &session)
                    }
                }
                // SafeSave gives the package the original's mode; the file wrapper's own wins.
                if let permissions = requestedPermissions {
                    let package = try FileDescriptor.openDirectory(url, operation: Self.writeOperation)
                    _ = try Syscall.fchmod(package.rawValue, permissions).get("set permissions of", url)
                }
            case .symbolicLink(let destination):
                try Self.replaceWithSymbolicLink(url, destination: destination)
            }
        }

        /// Puts a symbolic link at `url` in one step: made under a temporary name, renamed over.
        private static func replaceWithSymbolicLink(_ url: URL, destination: String) throws {
            let parent = try FileDescriptor.openDirectory(
                url.deletingLastPathComponent(), operation: writeOperation)
            let name = url.lastPathComponent
            let temporary = SafeSave.temporaryName(for: name, kind: "tmp")
            _ = try Syscall.symlinkat(destination, parent.rawValue, temporary).get(writeOperation, url)
            do {
                _ = try Syscall.renameat(parent.rawValue, temporary, parent.rawValue, name).get(
                    writeOperation, url)
            } catch {
                _ = Syscall.unlinkat(parent.rawValue, temporary)
                throw error
            }
            try parent.sync(operation: "flush (fsync) the folder of")
        }

        // MARK: - One item

        /// Writes `wrapper` as `name` in the folder open as `directory`.
        ///
        /// `original` is the folder of the earlier revision that corresponds to `directory`;
        /// `originalOfItem`, when given, is the earlier revision of the folder `wrapper` itself.
        /// `inPlace` says whether `directory` may already hold items (a reused folder) rather
        /// than being freshly created and empty.
        static func write(
            _ wrapper: FileWrapper, named name: String, in directory: FileDescriptor, url: URL,
            original: FileDescriptor?, originalOfItem: FileDescriptor? = nil, inPlace: Bool,
            session: inout WriteSession
        ) throws {
            let existing = inPlace ? try existingItem(name, in: directory, url: url) : nil
            let sourceName = wrapper.filename ?? name
            switch wrapper.contents {
            case .regularFile(let data):
                let permissions =
                    wrapper.requestedPermissions ?? wrapper.diskIdentity.map { $0.permissions }
                if let existing, let identity = wrapper.diskIdentity,
                    identity.isSameFileAndContents(as: FileStatus(existing)),
                    permissions == existing.permissions,
                    wrapper.dateMatches(existing)
                {
                    // Writing in place over the very file the bytes came from: nothing to do.
                    session.identities.append((wrapper, identity))
                    break
                }
                if let existing { try remove(name, existing, in: directory, url: url) }
                if let original,
                    let linked = linkUnchanged(
                        wrapper, from: sourceName, in: original, to: name, in: directory,
                        permissions: permissions)
                {
                    session.identities.append((wrapper, linked))
                    break
                }
                let identity = try writeFile(
                    data, named: name, in: directory, url: url,
                    permissions: permissions ?? (0o666 & ~Syscall.currentUmask()),
                    modificationTime: wrapper.requestedModificationTime)
                session.identities.append((wrapper, identity))

            case .directory(let children):
                var reused = false
                if let existing {
                    if existing.isDirectory {
                        reused = true
                    } else {
                        try remove(name, existing, in: directory, url: url)
                    }
                }
                if !reused {
                    // Owner-only until the children are in, so a read-only mode cannot stop us.
                    _ = try Syscall.mkdirat(directory.rawValue, name, 0o700).get(writeOperation, url)
                }
                let fd = try Syscall.openat(directory.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                    .get(writeOperation, url)
                let folder = FileDescriptor(rawValue: fd, url: url)
                let originalFolder =
                    originalOfItem
                    ?? original.flatMap { original -> FileDescriptor? in
                        guard
                            case .success(let fd) = Syscall.openat(
                                original.rawValue, sourceName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                        else { return nil }
                        return FileDescriptor(
                            rawValue: fd, url: original.url.appendingPathComponent(sourceName))
                    }
                for (key, child) in children {
                    try write(
                        child, named: key, in: folder, url: url.appendingPathComponent(key),
                        original: originalFolder,
                        inPlace: reused, session: &session)
                }
                if reused {
                    try removeItems(of: folder, notIn: children, url: url)
                }
                let mode = wrapper.requestedPermissions ?? (reused ? nil : 0o777 & ~Syscall.currentUmask())
                if let mode {
                    _ = try Syscall.fchmod(folder.rawValue, mode).get("set permissions of", url)
                }

            case .symbolicLink(let destination):
                if let existing {
                    if existing.isSymbolicLink,
                        case .success(destination) = Syscall.readlinkat(directory.rawValue, name)
                    {
                        break
                    }
                    try remove(name, existing, in: directory, url: url)
                }
                _ = try Syscall.symlinkat(destination, directory.rawValue, name).get(writeOperation, url)
            }
            session.names.append((wrapper, name))
        }

        /// Hard-links `sourceName` from the earlier revision if it still holds exactly the
        /// bytes this file wrapper has and the attributes it is to be written with; returns the
        /// identity of the linked file, or `nil` if its bytes must be written instead.
        private static func linkUnchanged(
            _ wrapper: FileWrapper, from sourceName: String, in original: FileDescriptor, to name: String,
            in directory: FileDescriptor, permissions: mode_t?
        ) -> FileStatus? {
            guard let identity = wrapper.diskIdentity,
                case .success(let source) = Syscall.fstatat(original.rawValue, sourceName, followLinks: false),
                identity.isSameFileAndContents(as: FileStatus(source)),
                permissions == nil || permissions == source.permissions,
                wrapper.dateMatches(source)
            else { return nil }
            // Any failure (EXDEV, EPERM, EMLINK, no hard links here) means: write the bytes.
            guard case .success = Syscall.linkat(original.rawValue, sourceName, directory.rawValue, name)
            else {
                return nil
            }
            // The original could have been replaced between the check and the link.
            guard case .success(let linked) = Syscall.fstatat(directory.rawValue, name, followLinks: false),
                identity.isSameFileAndContents(as: FileStatus(linked))
            else {
                _ = Syscall.unlinkat(directory.rawValue, name)
                return nil
            }
            return FileStatus(linked)
        }

        /// Whether the modification date this file wrapper asks for is already that of `info`.
        func dateMatches(_ info: stat) -> Bool {
            guard let wanted = requestedModificationTime else { return true }
            return wanted.tv_sec == info.st_mtim.tv_sec && wanted.tv_nsec == info.st_mtim.tv_nsec
        }

        /// Creates `name` with `data`. It is not flushed here: an atomic write flushes the whole
        /// staged package once, and a write in place does not promise durability.
        private static func writeFile(
            _ data: Data, named name: String, in directory: FileDescriptor, url: URL, permissions: mode_t,
            modificationTime: timespec?
        ) throws -> FileStatus {
            let fd = try Syscall.openat(
                directory.rawValue, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600
            )
            .get(writeOperation, url)
            let file = FileDescriptor(rawValue: fd, url: url)
            try data.withUnsafeBytes { try file.writeAll($0, operation: writeOperation) }
            _ = try Syscall.fchmod(fd, permissions).get("set permissions of", url)
            if let modificationTime {
                _ = try Syscall.futimens(fd, modification: modificationTime)
                    .get("set the modification date of", url)
            }
            return FileStatus(try file.stat(operation: writeOperation))
        }

        private static func existingItem(_ name: String, in directory: FileDescriptor, url: URL) throws
            -> stat?
        {
            switch Syscall.fstatat(directory.rawValue, name, followLinks: false) {
            case .success(let info): return info
            case .failure(.noSuchFileOrDirectory): return nil
            case .failure(let error): throw DocumentKitError(error, operation: writeOperation, url: url)
            }
        }

        private static func remove(_ name: String, _ info: stat, in directory: FileDescriptor, url: URL)
            throws
        {
            if info.isDirectory {
                // Relative to the open folder, never by path: the folder may be a staging folder
                // whose path differs from `url`, and a link swapped in must not be followed.
                let fd = try Syscall.openat(directory.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                    .get("remove", url)
                let folder = FileDescriptor(rawValue: fd, url: url)
                for child in try Syscall.directoryNames(in: fd).get("remove", url) {
                    let childURL = url.appendingPathComponent(child)
                    if let childInfo = try existingItem(child, in: folder, url: childURL) {
                        try remove(child, childInfo, in: folder, url: childURL)
                    }
                }
                _ = try Syscall.unlinkat(directory.rawValue, name, removeDirectory: true).get("remove", url)
            } else {
                _ = try Syscall.unlinkat(directory.rawValue, name).get("remove", url)
            }
        }

        private static func removeItems(
            of folder: FileDescriptor, notIn children: [String: FileWrapper], url: URL
        ) throws {
            let names = try Syscall.directoryNames(in: folder.rawValue).get(writeOperation, url)
            for name in names where children[name] == nil {
                let child = url.appendingPathComponent(name)
                guard let info = try existingItem(name, in: folder, url: child) else { continue }
                try remove(name, info, in: folder, url: child)
            }
        }
    }
#endif
