#if !canImport(ObjectiveC)
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    extension FileWrapper {

        func compare(withItemAt url: URL, includingPermissions: Bool) -> Bool {
            guard url.isFileURL,
                case .success(let fd) = Syscall.openat(
                    AT_FDCWD, url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
            else { return false }
            let parent = FileDescriptor(rawValue: fd, url: url.deletingLastPathComponent())
            // A link at `url` is followed, as reading follows it, unless this is a link itself.
            return compare(
                named: url.lastPathComponent, in: parent, followingLinks: !isSymbolicLink,
                includingPermissions: includingPermissions)
        }

        private func compare(
            named name: String, in directory: FileDescriptor, followingLinks: Bool, includingPermissions: Bool
        ) -> Bool {
            guard
                case .success(let info) = Syscall.fstatat(
                    directory.rawValue, name, followLinks: followingLinks)
            else { return false }
            switch contents {
            case .regularFile:
                guard info.isRegularFile else { return false }
                if let identity = diskIdentity {
                    guard identity.isSameFileAndContents(as: FileStatus(info)) else { return false }
                } else {
                    guard requestedModificationDate != nil, dateMatches(info) else { return false }
                }
                if includingPermissions {
                    let permissions = requestedPermissions ?? diskIdentity.map { $0.permissions }
                    if let permissions, permissions != info.permissions { return false }
                }
                return true
            case .symbolicLink(let destination):
                guard info.isSymbolicLink,
                    case .success(let actual) = Syscall.readlinkat(directory.rawValue, name)
                else { return false }
                return actual == destination
            case .directory(let children):
                guard info.isDirectory,
                    case .success(let fd) = Syscall.openat(
                        directory.rawValue, name, O_RDONLY | O_DIRECTORY | (followingLinks ? 0 : O_NOFOLLOW))
                else { return false }
                let folder = FileDescriptor(rawValue: fd, url: directory.url.appendingPathComponent(name))
                guard case .success(let names) = Syscall.directoryNames(in: fd),
                    Set(names) == Set(children.keys)
                else { return false }
                return children.allSatisfy { key, child in
                    child.compare(
                        named: key, in: folder, followingLinks: false,
                        includingPermissions: includingPermissions)
                }
            }
        }
    }
#endif
