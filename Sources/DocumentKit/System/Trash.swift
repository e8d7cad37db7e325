import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The desktop's trash, as the freedesktop.org Trash specification (1.0) lays it out: what
/// `gio trash`, the file managers and Debian's trash-cli list and restore from.
///
/// An item on the file system of the home trash (`$XDG_DATA_HOME/Trash`) goes there, with an
/// absolute `Path=`; an item on another file system goes to that file system's trash, in its
/// top folder: `$topdir/.Trash/$uid` when `.Trash` is a folder (not a link) with the sticky
/// bit, else `$topdir/.Trash-$uid` (made 0700), with `Path=` relative to the top folder. The
/// item is never copied across file systems: where neither trash can be used (a top folder the
/// user may not write in), the item stays and the error says so, as the specification allows.
///
/// Each trashing first claims a name: `info/NAME.trashinfo` made with `O_EXCL`, written and
/// flushed; then the item is renamed to `files/NAME`, never over an item there. A name taken in
/// either folder moves on to `NAME 2.ext`, `NAME 3.ext`, and so on. A failure removes the info
/// file it made and leaves the item where it was.
///
/// A trash folder, or its `files` or `info`, that is a symbolic link or another user's is
/// refused, not followed.
///
/// For example:
///
/// ```swift
/// let trash = Trash(home: dataHome.appendingPathComponent("Trash"))
/// let trashed = try trash.moveItem(at: document)   // …/Trash/files/Letter.txt
/// ```
package struct Trash: Sendable {
    /// The home trash: `$XDG_DATA_HOME/Trash`.
    package var home: URL
    /// Whose trash: the per-volume folders are named by it, and every trash folder must be its.
    package var userID: uid_t

    /// The longest name a trashed item gets: its info file adds `.trashinfo` and must still fit
    /// in a name of 255 bytes.
    static let longestName = Int(NAME_MAX) - ".trashinfo".utf8.count

    /// The trash of ``StandardDirectories/current``, for this process's user.
    package static var current: Trash {
        Trash(
            home: StandardDirectories.current.applicationSupport.appendingPathComponent(
                "Trash", isDirectory: true))
    }

    package init(home: URL, userID: uid_t = getuid()) {
        self.home = home
        self.userID = userID
    }

    /// Moves the item at `url` (a link itself, not what it points to) into the trash of its
    /// file system.
    ///
    /// - Parameters:
    ///   - date: The deletion date the info file records, in local time.
    ///   - willMove: Called once the name in the trash is claimed, just before the rename, with
    ///     where the item goes: a coordinated caller tells presenters.
    /// - Returns: The item's URL in the trash.
    /// - Throws: ``DocumentKitError`` naming the item or the trash folder, with the operation
    ///   "move the item to the trash"; the item is where it was.
    package func moveItem(at url: URL, date: Date = Date(), willMove: (URL) -> Void = { _ in }) throws -> URL
    {
        let operation = "move the item to the trash"
        let name = url.lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != ".." else {
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, detail: "not an item's name")
        }
        let parentURL = url.deletingLastPathComponent()
        let parent = FileDescriptor(
            rawValue: try Syscall.openat(AT_FDCWD, parentURL.path, O_RDONLY | O_DIRECTORY).get(
                operation, url),
            url: parentURL)
        let item = try Syscall.fstatat(parent.rawValue, name, followLinks: false).get(operation, url)
        let parentPath = try Syscall.realPath(parentURL.path).get(operation, url)
        let itemPath = parentPath == "/" ? "/" + name : parentPath + "/" + name
        do {
            let can = try TrashCan.forItem(onDevice: item.st_dev, at: itemPath, of: self, url: url)
            return try can.take(
                name, in: parent, url: url, originalPath: can.recordedPath(of: itemPath), date: date,
                willMove: willMove)
        } catch let error as DocumentKitError where error.url != url {
            // A trash folder's error: said as one about the item, which is what was asked.
            throw DocumentKitError(
                error.code, operation: operation, url: url, detail: error.description, underlying: error)
        }
    }
}

/// One trash folder, `files` and `info` open, checked and pinned.
struct TrashCan {
    let folder: URL
    let files: FileDescriptor
    let info: FileDescriptor
    /// The top folder of a per-volume trash, to which `Path=` is relative; nil for the home trash.
    let topFolder: String?

    private static let operation = "move the item to the trash"

    /// The trash an item on `device` goes to: the home trash on its file system, else the
    /// item's file system's own.
    static func forItem(onDevice device: dev_t, at path: String, of trash: Trash, url: URL) throws -> TrashCan
    {
        // The data home, not Trash in it: a Trash that is a link elsewhere is refused, not followed.
        if deviceOfNearestFolder(trash.home.deletingLastPathComponent().path) == device {
            return try home(trash, for: url)
        }
        let top = topFolder(of: path, device: device)
        do {
            return try volume(top, of: trash)
        } catch let error as DocumentKitError {
            var refusal = error
            refusal.url = url
            refusal.detail =
                "it is on another file system than the home trash (\(trash.home.path)), and the trash of its own file system, in \(top), cannot be used: \(error.description). DocumentKit does not copy an item across file systems into the trash"
            throw refusal
        }
    }

    /// The device of `path`, or of the nearest folder above it that exists.
    private static func deviceOfNearestFolder(_ path: String) -> dev_t? {
        var probe = path
        while true {
            if case .success(let info) = Syscall.fstatat(AT_FDCWD, probe, followLinks: true) {
                return info.st_dev
            }
            if probe == "/" || probe.isEmpty { return nil }
            probe = (probe as NSString).deletingLastPathComponent
        }
    }

    /// The top folder of the file system holding `path`: the highest folder above it on the
    /// same device (a mount point).
    private static func topFolder(of path: String, device: dev_t) -> String {
        var top = (path as NSString).deletingLastPathComponent
        while top != "/" {
            let above = (top as NSString).deletingLastPathComponent
            guard case .success(let info) = Syscall.fstatat(AT_FDCWD, above, followLinks: true),
                info.st_dev == device
            else { break }
            top = above
        }
        return top
    }

    /// `$XDG_DATA_HOME/Trash`, the data home made (0700, with the folders above it it lacks)
    /// if missing. An existing data home is left as it is: its mode is the user's choice.
    private static func home(_ trash: Trash, for url: URL) throws -> TrashCan {
        let dataHome = trash.home.deletingLastPathComponent()
        var missing: [String] = []
        var probe = dataHome.standardizedFileURL.path
        while probe != "/",
            case .failure(.noSuchFileOrDirectory) = Syscall.fstatat(AT_FDCWD, probe, followLinks: true)
        {
            missing.append(probe)
            probe = (probe as NSString).deletingLastPathComponent
        }
        for folder in missing.reversed() {
            switch Syscall.mkdirat(AT_FDCWD, folder, 0o700) {
            case .success, .failure(.fileExists): continue
            case .failure(let error):
                throw DocumentKitError(
                    error, operation: "create the folder of the home trash", url: URL(fileURLWithPath: folder)
                )
            }
        }
        let parent = try FileDescriptor.openDirectory(
            dataHome, operation: "open the folder of the home trash")
        let folder = try subfolder(
            trash.home.lastPathComponent, in: parent, url: trash.home, owner: trash.userID)
        return try TrashCan(folder: trash.home, descriptor: folder, owner: trash.userID, topFolder: nil)
    }

    /// `$topdir/.Trash/$uid` when `$topdir/.Trash` is a real folder with the sticky bit set (an
    /// administrator made it for every user) and `$uid` in it can be used, else
    /// `$topdir/.Trash-$uid`.
    private static func volume(_ top: String, of trash: Trash) throws -> TrashCan {
        let topURL = URL(fileURLWithPath: top, isDirectory: true)
        let topFolder = try FileDescriptor.open(topURL, O_RDONLY | O_DIRECTORY, operation: operation)
        if let shared = sharedTrash(
            in: topFolder, url: topURL.appendingPathComponent(".Trash", isDirectory: true))
        {
            let url = shared.url.appendingPathComponent(String(trash.userID), isDirectory: true)
            if let own = try? subfolder(String(trash.userID), in: shared, url: url, owner: trash.userID),
                let can = try? TrashCan(folder: url, descriptor: own, owner: trash.userID, topFolder: top)
            {
                return can
            }
        }
        let name = ".Trash-\(trash.userID)"
        let url = topURL.appendingPathComponent(name, isDirectory: true)
        let own = try subfolder(name, in: topFolder, url: url, owner: trash.userID)
        return try TrashCan(folder: url, descriptor: own, owner: trash.userID, topFolder: top)
    }

    /// `.Trash` in the top folder when it is a folder, not a link, with the sticky bit set:
    /// the specification says not to use it otherwise.
    private static func sharedTrash(in topFolder: FileDescriptor, url: URL) -> FileDescriptor? {
        guard
            case .success(let fd) = Syscall.openat(
                topFolder.rawValue, ".Trash", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        else { return nil }
        let folder = FileDescriptor(rawValue: fd, url: url)
        guard case .success(let info) = Syscall.fstat(fd), info.st_mode & S_ISVTX != 0 else { return nil }
        return folder
    }

    private init(folder: URL, descriptor: FileDescriptor, owner: uid_t, topFolder: String?) throws {
        self.folder = folder
        files = try Self.subfolder(
            "files", in: descriptor, url: folder.appendingPathComponent("files"), owner: owner)
        info = try Self.subfolder(
            "info", in: descriptor, url: folder.appendingPathComponent("info"), owner: owner)
        self.topFolder = topFolder
    }

    /// The folder `name` in `parent`, made 0700 if missing, opened without following a link,
    /// and refused unless `owner`'s.
    private static func subfolder(_ name: String, in parent: FileDescriptor, url: URL, owner: uid_t) throws
        -> FileDescriptor
    {
        switch Syscall.mkdirat(parent.rawValue, name, 0o700) {
        case .success, .failure(.fileExists): break
        case .failure(let error):
            throw DocumentKitError(error, operation: "create the trash folder", url: url)
        }
        let folder: FileDescriptor
        switch Syscall.openat(parent.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) {
        case .success(let fd): folder = FileDescriptor(rawValue: fd, url: url)
        case .failure(.tooManySymbolicLinkLevels), .failure(.notDirectory):
            let isLink =
                (try? Syscall.fstatat(parent.rawValue, name, followLinks: false).get())?.isSymbolicLink
                ?? false
            throw DocumentKitError(
                .invalidSymbolicLink, operation: "open the trash folder", url: url,
                detail: isLink
                    ? "it is a symbolic link, which a trash folder must not be" : "it is not a folder")
        case .failure(let error): throw DocumentKitError(error, operation: "open the trash folder", url: url)
        }
        let info = try folder.stat(operation: "open the trash folder")
        guard info.st_uid == owner else {
            throw DocumentKitError(
                .permissionDenied, operation: "open the trash folder", url: url, errno: .permissionDenied,
                detail: "it belongs to user \(info.st_uid), not to user \(owner)")
        }
        return folder
    }

    /// What `Path=` records: the absolute path in the home trash, the path below the top
    /// folder in a per-volume trash.
    func recordedPath(of path: String) -> String {
        guard let topFolder else { return path }
        let prefix = topFolder == "/" ? "/" : topFolder + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    /// Claims a name for `name` and renames the item into `files`.
    func take(
        _ name: String, in parent: FileDescriptor, url: URL, originalPath: String, date: Date,
        willMove: (URL) -> Void
    ) throws -> URL {
        let record = Array(Self.infoText(path: originalPath, date: date).utf8)
        for attempt in 1...1000 {
            let candidate = Self.candidate(name, attempt: attempt)
            let infoName = candidate + ".trashinfo"
            let infoURL = folder.appendingPathComponent("info").appendingPathComponent(infoName)
            switch Syscall.openat(info.rawValue, infoName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600) {
            case .failure(.fileExists): continue
            case .failure(let error):
                throw DocumentKitError(error, operation: "claim a name in the trash", url: infoURL)
            case .success(let fd):
                let infoFile = FileDescriptor(rawValue: fd, url: infoURL)
                let destination = folder.appendingPathComponent("files").appendingPathComponent(candidate)
                do {
                    try record.withUnsafeBytes {
                        try infoFile.writeAll($0, operation: "write the trash's info file")
                    }
                    try infoFile.sync(operation: "write the trash's info file")
                    willMove(destination)
                    try SafeSave.renameWithoutReplacing(
                        name, from: parent, to: candidate, in: files, url: destination,
                        operation: Self.operation, source: url)
                } catch let error as DocumentKitError {
                    _ = Syscall.unlinkat(info.rawValue, infoName)
                    // An item left in files/ without its info file: the next name.
                    if error.code == .fileExists && error.url == destination { continue }
                    throw refusalOfCrossing(error, url: url)
                } catch {
                    _ = Syscall.unlinkat(info.rawValue, infoName)
                    throw error
                }
                try files.sync(operation: Self.operation)
                try info.sync(operation: Self.operation)
                try parent.sync(operation: Self.operation)
                return destination
            }
        }
        throw DocumentKitError(
            .fileExists, operation: Self.operation, url: url,
            detail: "too many items with this name in \(folder.path)")
    }

    /// A rename across mounts of one file system (a bind mount) fails with `EXDEV`: say that
    /// the item is not copied, rather than only the errno.
    private func refusalOfCrossing(_ error: DocumentKitError, url: URL) -> DocumentKitError {
        guard error.errno == .crossDeviceLink else { return error }
        return DocumentKitError(
            .notSupported, operation: Self.operation, url: url, errno: .crossDeviceLink,
            detail:
                "the trash \(folder.path) is on another mount than the item, and DocumentKit does not copy an item across file systems into the trash"
        )
    }

    /// The `attempt`th name for `name`: itself, then `STEM 2.EXT`, `STEM 3.EXT`, …, each cut
    /// (at a character) to fit ``Trash/longestName`` with its info file's suffix.
    static func candidate(_ name: String, attempt: Int) -> String {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        var stem = dot.map { String(name[..<$0]) } ?? name
        var suffix = dot.map { String(name[$0...]) } ?? ""
        if suffix.utf8.count > 32 {
            stem = name
            suffix = ""
        }
        let number = attempt == 1 ? "" : " \(attempt)"
        let room = Trash.longestName - number.utf8.count - suffix.utf8.count
        while stem.utf8.count > room { stem.removeLast() }
        return stem + number + suffix
    }

    /// The info file: `[Trash Info]`, `Path=` percent-encoded, `DeletionDate=` in local time.
    static func infoText(path: String, date: Date) -> String {
        "[Trash Info]\nPath=\(percentEncoded(path))\nDeletionDate=\(localDate(date))\n"
    }

    /// Every byte but the unreserved ones and "/" as `%XX`: a newline or a "%" in a name cannot
    /// break the line or the decoding, and a name that is not ASCII reads back byte for byte.
    static func percentEncoded(_ path: String) -> String {
        var text = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += String(format: "%%%02X", byte)
            }
        }
        return text
    }

    /// `YYYY-MM-DDThh:mm:ss` in the local time zone, as the specification asks.
    static func localDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: date)
    }
}
