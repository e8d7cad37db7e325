import Foundation

/// Many versions in one file, `packs/PACK.pack`: the records of a batch of versions stored
/// together, the small contents they hold, and the new chunks of larger ones (a save's changed
/// lines), so that a batch of a thousand small documents costs the store a few files, not
/// three a document (a record, its item's folder, a chunk), and a save of a large document one
/// file, not one a changed chunk. A record may name chunks inline in another pack (an earlier
/// version's): its table lists them with the loose ones, and a pack whose versions are removed
/// keeps, in the pack that replaces it, the inline chunks other packs' records name.
///
/// A pack is written once, in `incoming/`, flushed, and renamed into `packs/` whole, so a pack
/// under its name is always complete; it is never written again. Removing some of its
/// versions writes a new pack holding the others that names the old one among those it
/// ``replaces``, then removes the old one: a crash between the two leaves both, and the new
/// one's list says which is obsolete. A pack whose versions are all gone is removed.
///
/// Layout: "DKPACK01", then the blobs (each record's JSON, as in a record file, and each
/// inline chunk's bytes), then the table of contents, then a footer: the table's offset (8
/// bytes) and length (4), its SHA-256 (32), and "DKPACKND". Integers are little-endian. The
/// table lists each record (item and version UUIDs, offset, length, SHA-256 of its JSON), each
/// inline chunk (name, offset, length), the loose chunks in `chunks/` its records name (so
/// that collecting unused chunks reads no record), and the packs it replaces. Everything read
/// back is checked: the table by its digest, a record by its digest and its own fields, a
/// chunk by its name. A damaged table sets the whole pack aside; nothing in it is trusted.
struct VersionPack: Sendable {
    /// One record in the pack.
    struct Record: Sendable, Equatable {
        var itemID: UUID
        var versionID: UUID
        var offset: Int
        var length: Int
        /// The SHA-256 of the record's JSON.
        var digest: [UInt8]
    }

    /// Where an inline chunk's bytes are.
    struct Span: Sendable, Equatable {
        var offset: Int
        var length: Int
    }

    var records: [Record] = []
    /// The inline chunks, by name.
    var chunks: [String: Span] = [:]
    /// The chunks in `chunks/` that its records name.
    var looseChunks: [String] = []
    /// The file names of the packs this one stands in for.
    var replaces: [String] = []

    static let header = Array("DKPACK01".utf8)
    static let trailer = Array("DKPACKND".utf8)
    static let footerLength = 8 + 4 + 32 + 8

    /// Contents of at most this many bytes are kept inline in a pack, whatever their chunks:
    /// small enough that a pack of a batch stays a few MiB, large enough for most text.
    static let mostInlineBytes = 32 << 10
    /// Of larger contents, the chunks not stored yet are kept inline up to this many bytes a
    /// version: two of the longest chunks, what a save that changed a few lines adds. A first
    /// version of a large file goes mostly to loose chunks, which packs' rewrites never copy.
    static let mostInlineNewBytes = 2 * Chunker.maximumSize
    /// A pack is closed and another begun past this many bytes of blobs.
    static let mostBytes = 4 << 20

    /// Whether `name` is a pack's file name: a UUID and `.pack`.
    static func isPackName(_ name: String) -> Bool {
        name.hasSuffix(".pack") && UUID(uuidString: String(name.dropLast(5))) != nil
    }

    /// A fresh pack file name.
    static func newName() -> String { "\(UUID().uuidString).pack" }

    /// Why a pack cannot be read.
    struct Damage: Error, CustomStringConvertible {
        var description: String
    }
}

// MARK: - Writing

extension VersionPack {
    /// A pack being put together in memory, blobs first; ``sealed()`` gives its bytes.
    struct Builder {
        private(set) var bytes = Data(VersionPack.header)
        private(set) var pack = VersionPack()
        private var loose: Set<String> = []

        init(replacing replaced: [String] = []) { pack.replaces = replaced }

        var isEmpty: Bool { pack.records.isEmpty }
        var recordCount: Int { pack.records.count }

        /// Whether a chunk of this name is inline here already.
        func holdsChunk(_ name: String) -> Bool { pack.chunks[name] != nil }

        /// Adds a record and the inline chunks it names; chunks already here are not added twice.
        /// Its other chunks are loose ones, in `chunks/`.
        mutating func add(_ record: VersionRecord, encoded: Data, inline: [(name: String, bytes: Data)]) {
            for (name, chunk) in inline where pack.chunks[name] == nil {
                pack.chunks[name] = Span(offset: bytes.count, length: chunk.count)
                bytes.append(chunk)
            }
            for name in record.manifest.chunkNames
            where pack.chunks[name] == nil && loose.insert(name).inserted {
                pack.looseChunks.append(name)
            }
            pack.records.append(
                Record(
                    itemID: UUID(uuidString: record.itemID) ?? UUID(),
                    versionID: UUID(uuidString: record.id) ?? UUID(),
                    offset: bytes.count, length: encoded.count, digest: VersionPack.digest(encoded)))
            bytes.append(encoded)
        }

        /// Adds an inline chunk no record of this pack names: one that records of other packs
        /// name, kept when the versions of its own pack are removed.
        mutating func add(_ name: String, _ chunk: Data) {
            guard pack.chunks[name] == nil else { return }
            pack.chunks[name] = Span(offset: bytes.count, length: chunk.count)
            bytes.append(chunk)
        }

        /// The whole file: blobs, table, footer.
        func sealed() -> Data {
            var table = Data()
            table.appendInteger(UInt32(pack.records.count))
            for record in pack.records {
                table.append(uuid: record.itemID)
                table.append(uuid: record.versionID)
                table.appendInteger(UInt64(record.offset))
                table.appendInteger(UInt32(record.length))
                table.append(contentsOf: record.digest)
            }
            table.appendInteger(UInt32(pack.chunks.count))
            for (name, span) in pack.chunks.sorted(by: { $0.key < $1.key }) {
                table.append(contentsOf: VersionPack.bytes(ofHex: name))
                table.appendInteger(UInt64(span.offset))
                table.appendInteger(UInt32(span.length))
            }
            table.appendInteger(UInt32(pack.looseChunks.count))
            for name in pack.looseChunks { table.append(contentsOf: VersionPack.bytes(ofHex: name)) }
            table.appendInteger(UInt32(pack.replaces.count))
            for name in pack.replaces {
                table.appendInteger(UInt16(name.utf8.count))
                table.append(contentsOf: Array(name.utf8))
            }
            var file = bytes
            let offset = file.count
            file.append(table)
            file.appendInteger(UInt64(offset))
            file.appendInteger(UInt32(table.count))
            file.append(contentsOf: VersionPack.digest(table))
            file.append(contentsOf: VersionPack.trailer)
            return file
        }
    }
}

// MARK: - Reading

extension VersionPack {
    /// Reads the table of contents of the pack open as `fd`, `size` bytes long.
    ///
    /// - Throws: ``Damage`` saying what is wrong with it; ``DocumentKitError`` if it cannot be read.
    static func read(_ fd: CInt, size: Int, url: URL) throws -> VersionPack {
        guard size >= header.count + footerLength else { throw Damage(description: "it is too short") }
        let footer = try bytes(fd, offset: size - footerLength, length: footerLength, url: url)
        var reader = ByteReader(footer)
        let tableOffset = try reader.integer(UInt64.self)
        let tableLength = try reader.integer(UInt32.self)
        let tableDigest = try reader.bytes(32)
        guard try reader.bytes(8) == trailer,
            try Self.bytes(fd, offset: 0, length: header.count, url: url) == header
        else { throw Damage(description: "it is not a pack") }
        guard tableOffset >= UInt64(header.count),
            tableOffset + UInt64(tableLength) + UInt64(footerLength) == UInt64(size)
        else { throw Damage(description: "its table of contents is out of place") }
        let table = try bytes(fd, offset: Int(tableOffset), length: Int(tableLength), url: url)
        guard digest(table) == tableDigest else {
            throw Damage(description: "its table of contents does not match its digest")
        }
        return try parse(table, blobsEnd: Int(tableOffset))
    }

    private static func parse(_ table: [UInt8], blobsEnd: Int) throws -> VersionPack {
        var reader = ByteReader(table)
        var pack = VersionPack()
        func span(_ offset: UInt64, _ length: UInt32) throws -> (Int, Int) {
            guard offset >= UInt64(header.count), offset + UInt64(length) <= UInt64(blobsEnd) else {
                throw Damage(description: "an entry lies outside the pack")
            }
            return (Int(offset), Int(length))
        }
        for _ in 0..<(try reader.count(of: 76)) {
            let itemID = try reader.uuid()
            let versionID = try reader.uuid()
            let (offset, length) = try span(try reader.integer(UInt64.self), try reader.integer(UInt32.self))
            pack.records.append(
                Record(
                    itemID: itemID, versionID: versionID, offset: offset, length: length,
                    digest: try reader.bytes(32)))
        }
        for _ in 0..<(try reader.count(of: 44)) {
            let name = LibCrypto.hex(try reader.bytes(32))
            let (offset, length) = try span(try reader.integer(UInt64.self), try reader.integer(UInt32.self))
            pack.chunks[name] = Span(offset: offset, length: length)
        }
        for _ in 0..<(try reader.count(of: 32)) {
            pack.looseChunks.append(LibCrypto.hex(try reader.bytes(32)))
        }
        for _ in 0..<(try reader.count(of: 2)) {
            let name = String(decoding: try reader.bytes(Int(try reader.integer(UInt16.self))), as: UTF8.self)
            guard isPackName(name) else { throw Damage(description: "it replaces a pack with a bad name") }
            pack.replaces.append(name)
        }
        guard reader.isAtEnd else { throw Damage(description: "its table of contents has bytes left over") }
        return pack
    }

    /// The record at `record` in the pack open as `fd`, checked against its digest and the
    /// table's identifiers.
    static func record(_ record: Record, in fd: CInt, url: URL) throws -> VersionRecord {
        let blob = try bytes(fd, offset: record.offset, length: record.length, url: url)
        guard digest(blob) == record.digest else {
            throw Damage(description: "a record does not match its digest")
        }
        guard let decoded = try? VersionRecord.decoded(from: Data(blob)),
            UUID(uuidString: decoded.itemID) == record.itemID,
            UUID(uuidString: decoded.id) == record.versionID
        else { throw Damage(description: "a record is not the one its table names") }
        return decoded
    }

    /// The inline chunk `name`, checked against its name.
    func chunk(_ name: String, in fd: CInt, url: URL) throws -> Data? {
        guard let span = chunks[name] else { return nil }
        let bytes = Data(try Self.bytes(fd, offset: span.offset, length: span.length, url: url))
        guard ContentHash(of: bytes).hex == name else {
            throw Damage(description: "an inline chunk does not hold the bytes its name says")
        }
        return bytes
    }

    private static func bytes(_ fd: CInt, offset: Int, length: Int, url: URL) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: length)
        var done = 0
        try result.withUnsafeMutableBytes { buffer in
            while done < length {
                let count = try Syscall.pread(
                    fd, UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), off_t(offset + done)
                ).get("read a version pack", url)
                guard count > 0 else { throw Damage(description: "it ends early") }
                done += count
            }
        }
        return result
    }

    static func digest(_ bytes: some ContiguousBytes) -> [UInt8] {
        Self.bytes(ofHex: bytes.withUnsafeBytes { ContentHash(of: $0) }.hex)
    }

    static func bytes(ofHex hex: String) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for character in hex.utf8 {
            let value = character <= 57 ? character &- 48 : (character | 0x20) &- 87
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return result
    }
}

/// Reads a pack's table: every read is bounds-checked and fails as damage.
private struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else {
            throw VersionPack.Damage(description: "its table of contents ends early")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        var value: T = 0
        for (index, byte) in try bytes(MemoryLayout<T>.size).enumerated() { value |= T(byte) << (8 * index) }
        return value
    }

    /// A count of entries of `size` bytes each, refused when the table cannot hold that many.
    mutating func count(of size: Int) throws -> Int {
        let count = Int(try integer(UInt32.self))
        guard count <= (bytes.count - offset) / size else {
            throw VersionPack.Damage(description: "its table of contents counts more entries than it holds")
        }
        return count
    }

    mutating func uuid() throws -> UUID {
        let raw = try bytes(16)
        return UUID(
            uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10],
                raw[11],
                raw[12], raw[13], raw[14], raw[15]
            ))
    }
}

extension Data {
    fileprivate mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func append(uuid: UUID) {
        Swift.withUnsafeBytes(of: uuid.uuid) { append(contentsOf: $0) }
    }
}
