#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error number reported by the operating system.
///
/// `Errno` lets callers match system failures by name, the way swift-system does:
///
/// ```swift
/// do {
///     try SafeSave.write(data, to: url)
/// } catch Errno.noSpace {
///     // tell the user the disk is full
/// }
/// ```
public struct Errno: Error, Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The raw C error number.
    public let rawValue: CInt

    /// Creates an error number from its raw C value.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The error number the calling thread's last failed system call left behind.
    static var current: Errno { Errno(rawValue: errno) }

    /// The system's description of the error, such as "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }

    /// Matches an error against this error number, looking through ``DocumentKitError``.
    public static func ~= (pattern: Errno, error: any Error) -> Bool {
        if let errno = error as? Errno { return errno == pattern }
        if let error = error as? DocumentKitError { return error.errno == pattern }
        return false
    }

    /// Operation not permitted (`EPERM`).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// No such file or directory (`ENOENT`).
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// Interrupted system call (`EINTR`).
    public static let interrupted = Errno(rawValue: EINTR)
    /// Input/output error (`EIO`).
    public static let ioError = Errno(rawValue: EIO)
    /// Bad file descriptor (`EBADF`).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// Resource temporarily unavailable (`EAGAIN`).
    public static let resourceTemporarilyUnavailable = Errno(rawValue: EAGAIN)
    /// Permission denied (`EACCES`).
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// File exists (`EEXIST`).
    public static let fileExists = Errno(rawValue: EEXIST)
    /// Invalid cross-device link (`EXDEV`).
    public static let crossDeviceLink = Errno(rawValue: EXDEV)
    /// Not a directory (`ENOTDIR`).
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// Is a directory (`EISDIR`).
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// Invalid argument (`EINVAL`).
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// File too large (`EFBIG`).
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// No space left on device (`ENOSPC`).
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// Read-only file system (`EROFS`).
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// Too many levels of symbolic links (`ELOOP`).
    public static let tooManySymbolicLinkLevels = Errno(rawValue: ELOOP)
    /// File name too long (`ENAMETOOLONG`).
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// Directory not empty (`ENOTEMPTY`).
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// Function not implemented (`ENOSYS`).
    public static let notImplemented = Errno(rawValue: ENOSYS)
    /// Operation not supported (`EOPNOTSUPP`).
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// No data available, for example a missing extended attribute (`ENODATA`).
    public static let noData = Errno(rawValue: ENODATA)
    /// Result too large for the buffer (`ERANGE`).
    public static let resultOutOfRange = Errno(rawValue: ERANGE)
    /// Disk quota exceeded (`EDQUOT`).
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    /// No such device or address, for example opening a socket (`ENXIO`).
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    /// Text file busy (`ETXTBSY`).
    public static let textFileBusy = Errno(rawValue: ETXTBSY)
    /// Argument list too long, also an oversized extended attribute (`E2BIG`).
    public static let argumentListTooLong = Errno(rawValue: E2BIG)
}
