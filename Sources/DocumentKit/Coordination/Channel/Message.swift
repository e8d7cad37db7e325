import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One request or reply that file coordinators in different processes exchange over a
/// ``MessageChannelServer`` socket.
///
/// Before a process writes a file it sends `willWrite` to every process with a presenter of
/// that file (or of a folder holding it), which saves and relinquishes and answers `ack`;
/// after the write it sends `didWrite`. A version store's news (a conflict version added)
/// travels as `versionsDidChange`. The channel only carries the fields; the coordination
/// layer gives them meaning.
///
/// Paths travel as the bytes of their file-system representation, never as strings, because
/// a Linux file name may be any bytes and need not be UTF-8. On the wire the message is JSON
/// with the paths in base64.
///
/// For example:
///
/// ```swift
/// var request = Message(kind: .willWrite, url: documentURL)
/// request.presenterIDs = [presenterID]
/// let reply = try MessageChannelClient.send(request, to: socketPath)
/// ```
package struct Message: Codable, Sendable, Equatable {
    /// What a message asks for or reports; open-ended so that coordination can add kinds
    /// without touching the channel.
    public struct Kind: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A coordinated read is about to start: the presenter saves its unsaved changes.
        public static let willRead = Kind(rawValue: "willRead")
        /// A coordinated write is about to start: the presenter saves and relinquishes.
        public static let willWrite = Kind(rawValue: "willWrite")
        /// A coordinated write has finished: the presenter reacquires and reloads.
        public static let didWrite = Kind(rawValue: "didWrite")
        /// The item moved to ``Message/destinationPath``.
        public static let didMove = Kind(rawValue: "didMove")
        /// The item is about to be deleted: the presenter lets go of it.
        public static let willDelete = Kind(rawValue: "willDelete")
        /// A version of the item was added, removed or resolved: ``Message/versionChange``
        /// says which. Sent to processes presenting the item or a folder above it.
        public static let versionsDidChange = Kind(rawValue: "versionsDidChange")
        /// The usual reply: the request was handled (``Message/error`` says if it failed).
        public static let ack = Kind(rawValue: "ack")
        /// The server's reply to a frame it could not understand: too large, or not a message.
        public static let rejected = Kind(rawValue: "rejected")
        /// The server's reply to a connection from a process of another user.
        public static let refused = Kind(rawValue: "refused")
    }

    /// What the message asks for or reports.
    public var kind: Kind
    /// The item's path as file-system bytes; empty when the message is about no item.
    public var path: [UInt8]
    /// Where the item went, for a move.
    public var destinationPath: [UInt8]?
    /// Reading or writing options of the coordination, as raw bits.
    public var options: UInt
    /// The presenters the message is for, by their identifiers.
    public var presenterIDs: [String]
    /// Whether the item existed when the access began, in `willRead`, `willWrite` and
    /// `willDelete`: tells an item that appears from one that changes. Nil means it did.
    public var itemExisted: Bool?
    /// Whether the item exists after the access, in `didWrite` and `didMove`. Nil means it does.
    public var itemExists: Bool?
    /// What changed, in `versionsDidChange`.
    public var versionChange: VersionChange?
    /// Pairs a reply with its request; the replying side copies it over.
    public var requestID: UInt64
    /// The process that sent the message. The server replaces the value in a request with
    /// the one the kernel reports for the connection, so a handler can trust it.
    public var senderPID: Int32
    /// What went wrong, in a reply that reports a failure.
    public var error: String?

    /// Creates a message from this process.
    public init(
        kind: Kind, path: [UInt8] = [], destinationPath: [UInt8]? = nil, options: UInt = 0,
        presenterIDs: [String] = [], itemExisted: Bool? = nil, itemExists: Bool? = nil,
        versionChange: VersionChange? = nil, requestID: UInt64 = 0, senderPID: Int32 = getpid(),
        error: String? = nil
    ) {
        self.kind = kind
        self.path = path
        self.destinationPath = destinationPath
        self.options = options
        self.presenterIDs = presenterIDs
        self.itemExisted = itemExisted
        self.itemExists = itemExists
        self.versionChange = versionChange
        self.requestID = requestID
        self.senderPID = senderPID
        self.error = error
    }

    /// Creates a message about the item at a file URL.
    public init(kind: Kind, url: URL, destinationURL: URL? = nil, options: UInt = 0, requestID: UInt64 = 0) {
        self.init(
            kind: kind, path: Self.fileSystemRepresentation(of: url),
            destinationPath: destinationURL.map(Self.fileSystemRepresentation(of:)), options: options,
            requestID: requestID)
    }

    /// A reply to this message, with the same request identifier and this process as sender.
    public func reply(_ kind: Kind = .ack, error: String? = nil) -> Message {
        Message(kind: kind, path: path, presenterIDs: presenterIDs, requestID: requestID, error: error)
    }

    /// The item as a file URL.
    ///
    /// Foundation's `URL` on Linux replaces bytes that are not UTF-8 with U+FFFD, so a URL
    /// made from such a path names another file: match items by ``path`` where it matters.
    public var url: URL { Self.url(fromFileSystemRepresentation: path) }

    /// The destination as a file URL, for a move; see ``url`` about names that are not UTF-8.
    public var destinationURL: URL? { destinationPath.map(Self.url(fromFileSystemRepresentation:)) }

    /// The bytes the system calls see for a file URL's path.
    public static func fileSystemRepresentation(of url: URL) -> [UInt8] { url.fileSystemBytes }

    /// A file URL for the bytes of a path.
    public static func url(fromFileSystemRepresentation bytes: [UInt8]) -> URL { URL(fileSystemBytes: bytes) }

    private enum CodingKeys: String, CodingKey {
        case kind, path, destinationPath, options, presenterIDs, itemExisted, itemExists, versionChange
        case requestID, senderPID, error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        path = try Self.decodeBytes(container, .path) ?? []
        destinationPath = try Self.decodeBytes(container, .destinationPath)
        options = try container.decodeIfPresent(UInt.self, forKey: .options) ?? 0
        presenterIDs = try container.decodeIfPresent([String].self, forKey: .presenterIDs) ?? []
        itemExisted = try container.decodeIfPresent(Bool.self, forKey: .itemExisted)
        itemExists = try container.decodeIfPresent(Bool.self, forKey: .itemExists)
        versionChange = try container.decodeIfPresent(VersionChange.self, forKey: .versionChange)
        requestID = try container.decodeIfPresent(UInt64.self, forKey: .requestID) ?? 0
        senderPID = try container.decodeIfPresent(Int32.self, forKey: .senderPID) ?? 0
        error = try container.decodeIfPresent(String.self, forKey: .error)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(Data(path).base64EncodedString(), forKey: .path)
        try container.encodeIfPresent(
            destinationPath.map { Data($0).base64EncodedString() }, forKey: .destinationPath)
        try container.encode(options, forKey: .options)
        try container.encode(presenterIDs, forKey: .presenterIDs)
        try container.encodeIfPresent(itemExisted, forKey: .itemExisted)
        try container.encodeIfPresent(itemExists, forKey: .itemExists)
        try container.encodeIfPresent(versionChange, forKey: .versionChange)
        try container.encode(requestID, forKey: .requestID)
        try container.encode(senderPID, forKey: .senderPID)
        try container.encodeIfPresent(error, forKey: .error)
    }

    private static func decodeBytes(
        _ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys
    ) throws -> [UInt8]? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "\(key.stringValue) is not base64")
        }
        return [UInt8](data)
    }
}

/// How a message travels on a stream socket: a 4-byte big-endian payload length, then the
/// message as JSON.
///
/// The length comes first so that the reader knows how much to wait for, and is checked
/// against ``maximumPayloadLength`` before anything is allocated, so that a stray or hostile
/// writer cannot make the reader allocate gigabytes.
package enum MessageFrame {
    /// The size of the length prefix.
    public static let headerLength = 4
    /// The largest payload either side accepts: 1 MiB, far more than a message with a few
    /// long paths and presenter identifiers needs.
    public static let maximumPayloadLength = 1 << 20

    /// The frame for a message: header and payload.
    ///
    /// - Throws: ``DocumentKitError`` with code `invalidArgument` if the message is larger
    ///   than ``maximumPayloadLength``.
    public static func encode(_ message: Message) throws -> [UInt8] {
        let payload = try JSONEncoder().encode(message)
        guard payload.count <= maximumPayloadLength else {
            throw DocumentKitError(
                .invalidArgument, operation: "encode a message for a file presenter", url: nil,
                detail:
                    "the message takes \(payload.count) bytes, more than the limit of \(maximumPayloadLength)"
            )
        }
        let length = UInt32(payload.count)
        return [
            UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
            UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
        ] + payload
    }

    /// The payload length a header announces; may exceed ``maximumPayloadLength``, which the
    /// caller checks.
    public static func payloadLength(header: [UInt8]) -> Int {
        precondition(header.count == headerLength)
        return header.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The message in a payload.
    ///
    /// - Throws: `DecodingError` if the payload is not a message.
    public static func decode(payload: [UInt8]) throws -> Message {
        try JSONDecoder().decode(Message.self, from: Data(payload))
    }
}

extension DocumentKitError.Code {
    /// The process that registered a file presenter is gone: nothing listens at its socket
    /// any more, or it closed the connection without answering. Coordination treats the
    /// presenter as removed and cleans up its registration.
    public static let presenterGone = DocumentKitError.Code(rawValue: "presenterGone")
}

/// Where each process's message channel socket lives.
///
/// The scheme is `<runtime>/documentkit/presenters/<pid>.sock`, under the private runtime
/// folder of ``StandardDirectories``: a process finds another's socket from its process
/// identifier alone, and a socket left behind by a crash is recognised by its pid.
package enum MessageChannelPaths {
    /// The folder holding every process's socket.
    public static func presentersDirectory(in runtime: URL) -> URL {
        runtime.appendingPathComponent("documentkit", isDirectory: true)
            .appendingPathComponent("presenters", isDirectory: true)
    }

    /// The socket path of a process.
    ///
    /// - Parameters:
    ///   - pid: The process, by default this one.
    ///   - directories: Where the runtime folder is; it is created, private, if missing.
    /// - Throws: ``DocumentKitError`` if the runtime folder cannot be made or is not private.
    public static func socketPath(
        forProcess pid: pid_t = getpid(), directories: StandardDirectories = .current
    ) throws -> String {
        let runtime = try directories.makeRuntimeDirectory()
        return presentersDirectory(in: runtime).appendingPathComponent("\(pid).sock").path
    }

    /// The process a socket path names, if it follows the scheme.
    public static func processIdentifier(ofSocketPath path: String) -> pid_t? {
        let name = (path as NSString).lastPathComponent
        guard name.hasSuffix(".sock") else { return nil }
        return pid_t(name.dropLast(".sock".count))
    }
}
