import Foundation

/// The error DocumentKit throws: what went wrong, on which file, during which operation.
///
/// Every failure names the file and the operation, and carries the system's error number
/// where there is one, so that a message shown to a user reads
/// "Could not save “Notes.txt”: No space left on device".
///
/// For example:
///
/// ```swift
/// do {
///     let wrapper = try FileWrapper(url: url)
/// } catch let error as DocumentKitError where error.code == .fileNotFound {
///     print("No file at \(error.url?.path ?? "?")")
/// }
/// ```
///
/// `Errno` patterns match it too: `catch Errno.noSpace { ... }`.
public struct DocumentKitError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is, independent of the operation.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file or one of its parent folders does not exist.
        public static let fileNotFound = Code(rawValue: "fileNotFound")
        /// The process lacks permission for the file or its folder.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// A file already exists where a new one was to be created.
        public static let fileExists = Code(rawValue: "fileExists")
        /// The item is of a kind the operation cannot handle (a socket, a device, a FIFO).
        public static let unsupportedFileType = Code(rawValue: "unsupportedFileType")
        /// A folder was found where a file was expected, or the reverse.
        public static let wrongFileType = Code(rawValue: "wrongFileType")
        /// The contents could not be understood.
        public static let corruptFile = Code(rawValue: "corruptFile")
        /// The volume is full or the user's quota is exhausted.
        public static let outOfSpace = Code(rawValue: "outOfSpace")
        /// The file exceeds a size limit of the process or the file system.
        public static let fileTooLarge = Code(rawValue: "fileTooLarge")
        /// The volume is mounted read-only.
        public static let readOnlyVolume = Code(rawValue: "readOnlyVolume")
        /// A symbolic link points nowhere or loops.
        public static let invalidSymbolicLink = Code(rawValue: "invalidSymbolicLink")
        /// A name or argument is not acceptable (for example a file name with a slash).
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// The file system does not support the operation.
        public static let notSupported = Code(rawValue: "notSupported")
        /// The operation was given up after waiting too long.
        public static let timedOut = Code(rawValue: "timedOut")
        /// Another program changed the file since it was read; nothing was overwritten.
        public static let editedElsewhere = Code(rawValue: "editedElsewhere")
        /// Another program deleted the file; the detail says where unsaved changes went.
        public static let deletedElsewhere = Code(rawValue: "deletedElsewhere")
        /// Any other input/output failure.
        public static let ioFailure = Code(rawValue: "ioFailure")
    }

    /// What kind of failure this is.
    public var code: Code
    /// The operation that failed, in words: "open", "write", "fsync", "rename", "read".
    public var operation: String
    /// The file the operation was working on.
    public var url: URL?
    /// The system's error number, when a system call failed.
    public var errno: Errno?
    /// More detail in words, when there is any.
    public var detail: String?
    /// The error that caused this one, such as the one a document subclass threw while loading.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, operation: String, url: URL?, errno: Errno? = nil, detail: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.operation = operation
        self.url = url
        self.errno = errno
        self.detail = detail
        self.underlying = underlying
    }

    /// Creates an error from a failed system call, choosing the code from the error number.
    public init(_ errno: Errno, operation: String, url: URL?, detail: String? = nil) {
        self.init(Self.code(for: errno), operation: operation, url: url, errno: errno, detail: detail)
    }

    static func code(for errno: Errno) -> Code {
        switch errno {
        case .noSuchFileOrDirectory: return .fileNotFound
        case .permissionDenied, .notPermitted: return .permissionDenied
        case .fileExists: return .fileExists
        case .noSpace, .diskQuotaExceeded: return .outOfSpace
        case .fileTooLarge: return .fileTooLarge
        case .readOnlyFileSystem: return .readOnlyVolume
        case .tooManySymbolicLinkLevels: return .invalidSymbolicLink
        case .isDirectory, .notDirectory: return .wrongFileType
        case .noSuchDeviceOrAddress: return .unsupportedFileType
        case .invalidArgument, .fileNameTooLong: return .invalidArgument
        case .notSupported, .notImplemented: return .notSupported
        default: return .ioFailure
        }
    }

    /// One sentence naming the operation, the file and the reason.
    public var description: String {
        var text = "Could not \(operation)"
        if let url { text += " “\(url.path)”" }
        if let detail {
            text += ": \(detail)"
        } else if let errno {
            text += ": \(errno.description)"
        } else {
            text += ": \(code.rawValue)"
        }
        if let errno, detail != nil { text += " (\(errno.description))" }
        return text
    }

    public var errorDescription: String? { description }
}
