import Foundation

/// The layout of an encrypted file's contents in vault format 8, and its sizes.
///
/// A file is its 68-byte header, then its plaintext in chunks of 32 KiB (the last one shorter,
/// none for an empty file), each stored as a 12-byte nonce, the ciphertext and a 16-byte tag:
///
/// ```
/// header: nonce (12) | AES-GCM(encryption master key; 0xFF × 8 | content key (32)) (40) | tag (16)
/// chunk n: nonce (12) | AES-GCM(content key; plaintext, AAD: n as 8 bytes big-endian | header nonce) | tag (16)
/// ```
///
/// The chunk number and the header nonce in each chunk's tag are what catch chunks reordered,
/// dropped from the middle, or moved from another file.
public enum VaultContent {
    /// The header's size.
    public static let headerCount = 68
    /// The plaintext in a full chunk.
    public static let chunkPlaintextCount = 32 * 1024
    /// What each chunk adds: its nonce and its tag.
    public static let chunkOverhead = AESGCM.nonceCount + AESGCM.tagCount
    /// A full chunk's size as stored.
    public static let chunkCiphertextCount = chunkPlaintextCount + chunkOverhead

    /// The stored size of a file of `plaintextCount` bytes.
    public static func ciphertextCount(plaintextCount: Int64) -> Int64 {
        let full = plaintextCount / Int64(chunkPlaintextCount)
        let rest = plaintextCount % Int64(chunkPlaintextCount)
        return Int64(headerCount) + full * Int64(chunkCiphertextCount)
            + (rest > 0 ? rest + Int64(chunkOverhead) : 0)
    }

    /// The plaintext size of a stored file of `ciphertextCount` bytes; nil for a size no
    /// encrypted file has (shorter than a header, or a last chunk no longer than its nonce and tag).
    public static func plaintextCount(ciphertextCount: Int64) -> Int64? {
        guard ciphertextCount >= Int64(headerCount) else { return nil }
        let body = ciphertextCount - Int64(headerCount)
        let full = body / Int64(chunkCiphertextCount)
        let rest = body % Int64(chunkCiphertextCount)
        guard rest == 0 || rest > Int64(chunkOverhead) else { return nil }
        return full * Int64(chunkPlaintextCount) + (rest > 0 ? rest - Int64(chunkOverhead) : 0)
    }
}

/// A file's header: its nonce and its content key.
///
/// The key is kept as the header's whole 40-byte payload (8 reserved bytes, then the key) in
/// one secret's buffer: a secret is a locked page (`mlock`) and a wipe, and a file synced made
/// three of them where one serves.
struct VaultFileHeader {
    let nonce: Data
    /// 0xFF × 8 (or what a key holder put there), then the content key.
    private let payload: SecretBytes
    private static let reservedCount = 8

    /// A header with a fresh nonce and content key.
    static func random() throws -> VaultFileHeader {
        try VaultFileHeader(
            nonce: SecureRandom.bytes(AESGCM.nonceCount),
            payload: SecretBytes(count: reservedCount + AESGCM.keyCount) { payload in
                payload.initializeMemory(as: UInt8.self, repeating: 0xFF)
                try SecureRandom.fill(UnsafeMutableRawBufferPointer(rebasing: payload[reservedCount...]))
            })
    }

    private init(nonce: Data, payload: SecretBytes) {
        self.nonce = nonce
        self.payload = payload
    }

    /// The cipher of the file's chunks, under its content key, set up for `use`.
    func contentCipher(_ use: AESGCM.Use) throws -> AESGCM {
        try payload.withUnsafeBytes {
            try AESGCM(key: UnsafeRawBufferPointer(rebasing: $0[Self.reservedCount...]), use: use)
        }
    }

    /// The 68 bytes that start the file.
    func sealed(with keys: VaultMasterKeys) throws -> Data {
        var header = Data(count: VaultContent.headerCount)
        try header.withUnsafeMutableBytes { output in
            try nonce.withUnsafeBytes { nonce in
                try payload.withUnsafeBytes { payload in
                    UnsafeMutableRawBufferPointer(rebasing: output[0..<12]).copyMemory(from: nonce)
                    try keys.encryptionKey.withUnsafeBytes { try AESGCM(key: $0, use: .sealing) }.seal(
                        payload, nonce: nonce, additionalData: [],
                        into: UnsafeMutableRawBufferPointer(rebasing: output[12..<52]),
                        tag: UnsafeMutableRawBufferPointer(rebasing: output[52..<68]))
                }
            }
        }
        return header
    }

    /// The header in `bytes` (68 of them), if it authenticates under the vault's encryption key.
    ///
    /// - Throws: ``VaultError`` `.forgedHeader` naming `file` if it does not.
    init(opening bytes: UnsafeRawBufferPointer, keys: VaultMasterKeys, file: String) throws {
        precondition(bytes.count == VaultContent.headerCount)
        let nonce = Data(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
        let cipher = try keys.encryptionKey.withUnsafeBytes { try AESGCM(key: $0, use: .opening) }
        let payload = try SecretBytes(count: 40) { payload in
            do {
                try cipher.open(
                    UnsafeRawBufferPointer(rebasing: bytes[12..<52]),
                    nonce: UnsafeRawBufferPointer(rebasing: bytes[0..<12]), additionalData: [],
                    tag: UnsafeRawBufferPointer(rebasing: bytes[52..<68]), into: payload)
            } catch let error as VaultError where error.code == .authenticationFailed {
                throw VaultError(.forgedHeader, item: file)
            }
        }
        // The 8 reserved bytes are authenticated with the key: whatever a key holder put there
        // is taken (Cryptomator ignores them too).
        self.init(nonce: nonce, payload: payload)
    }
}

/// Encrypts a file's contents as they come, a chunk at a time: never the whole file in memory.
///
/// Give it the plaintext in pieces of any size with ``update(_:to:)``, then call
/// ``finish(to:)``; write ``header`` first, then every chunk the two hand to `sink`, in order.
/// Each chunk is sealed into one buffer the encryptor keeps, so a file of any size costs no
/// allocation a chunk. ``update(_:)`` and ``finish()`` return the chunks as `Data` instead.
///
/// For example:
///
/// ```swift
/// let encryptor = try VaultContentEncryptor(keys: keys)
/// try output.write(encryptor.header)
/// while let piece = try input.read(upToCount: 1 << 20) {
///     try piece.withUnsafeBytes { try encryptor.update($0) { try output.write($0) } }
/// }
/// try encryptor.finish { try output.write($0) }
/// ```
public final class VaultContentEncryptor {
    /// The file's header, to be written before any chunk.
    public let header: Data

    private let headerNonce: Data
    private let cipher: AESGCM
    private var pending: [UInt8] = []
    private let sealed = UnsafeMutableRawBufferPointer.allocate(
        byteCount: VaultContent.chunkCiphertextCount, alignment: 16)
    private var chunkNumber: UInt64 = 0
    private var finished = false

    /// An encryptor for one new file, with a fresh header (nonce and content key).
    ///
    /// - Throws: ``VaultError`` if libcrypto fails.
    public init(keys: VaultMasterKeys) throws {
        let fileHeader = try VaultFileHeader.random()
        header = try fileHeader.sealed(with: keys)
        headerNonce = fileHeader.nonce
        cipher = try fileHeader.contentCipher(.sealing)
        pending.reserveCapacity(VaultContent.chunkPlaintextCount)
    }

    deinit { sealed.deallocate() }

    /// Seals the chunks that `plaintext` completes, handing each to `sink` (valid only during
    /// the call); the rest is kept for the next call.
    public func update(_ plaintext: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        precondition(!finished, "update after finish")
        var offset = 0
        if !pending.isEmpty {
            let take = Swift.min(VaultContent.chunkPlaintextCount - pending.count, plaintext.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: plaintext[0..<take]))
            offset = take
            if pending.count == VaultContent.chunkPlaintextCount {
                try pending.withUnsafeBytes { try seal($0, to: sink) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while plaintext.count - offset >= VaultContent.chunkPlaintextCount {
            try seal(
                UnsafeRawBufferPointer(
                    rebasing: plaintext[offset..<offset + VaultContent.chunkPlaintextCount]),
                to: sink)
            offset += VaultContent.chunkPlaintextCount
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: plaintext[offset...]))
    }

    /// Seals the last, shorter chunk and hands it to `sink` (nothing if the plaintext ended on a
    /// chunk boundary, or was empty). The encryptor takes nothing more.
    public func finish(to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        precondition(!finished, "finish twice")
        finished = true
        if !pending.isEmpty {
            try pending.withUnsafeBytes { try seal($0, to: sink) }
        }
        pending.removeAll()
    }

    /// The chunks that `plaintext` completes, sealed; the rest is kept for the next call.
    public func update(_ plaintext: Data) throws -> Data {
        var output = Data()
        // Reserved only when a chunk is sealed here, so that the output is never left empty
        // with room reserved: Foundation's Data (Swift 6.3.1) traps when an empty Data is
        // appended to one of those.
        let chunks = (pending.count + plaintext.count) / VaultContent.chunkPlaintextCount
        if chunks > 0 { output.reserveCapacity(chunks * VaultContent.chunkCiphertextCount) }
        try plaintext.withUnsafeBytes { try update($0) { output.append(contentsOf: $0) } }
        return output
    }

    /// The last, shorter chunk sealed (nothing if the plaintext ended on a chunk boundary, or
    /// was empty). The encryptor takes nothing more.
    public func finish() throws -> Data {
        var output = Data()
        try finish { output.append(contentsOf: $0) }
        return output
    }

    private func seal(_ chunk: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        let count = chunk.count + VaultContent.chunkOverhead
        let nonce = UnsafeMutableRawBufferPointer(rebasing: sealed[0..<12])
        try SecureRandom.fill(nonce)
        var number = chunkNumber.bigEndian
        try withUnsafeBytes(of: &number) { number in
            try headerNonce.withUnsafeBytes { headerNonce in
                try cipher.seal(
                    chunk, nonce: UnsafeRawBufferPointer(nonce), additionalData: [number, headerNonce],
                    into: UnsafeMutableRawBufferPointer(rebasing: sealed[12..<12 + chunk.count]),
                    tag: UnsafeMutableRawBufferPointer(rebasing: sealed[12 + chunk.count..<count]))
            }
        }
        chunkNumber += 1
        try sink(UnsafeRawBufferPointer(rebasing: sealed[0..<count]))
    }
}

/// Decrypts a file's contents as they come, a chunk at a time, checking each chunk before any
/// of its bytes are given out.
///
/// Give it the stored bytes in pieces of any size with ``update(_:to:)``; it hands `sink` the
/// plaintext of each chunk that authenticated, from one buffer it keeps. ``finish(to:)`` checks
/// the end: a file cut inside its header or a chunk is an error there. After an error it takes
/// nothing more: the caller must throw away what it wrote of this file, since the file as a
/// whole is not the one that was stored. ``update(_:)`` and ``finish()`` return `Data` instead.
///
/// The format cannot tell a file that ends on a chunk boundary from one whose last whole chunks
/// a server dropped: see docs/Encryption.md.
///
/// For example:
///
/// ```swift
/// let decryptor = VaultContentDecryptor(keys: keys, file: "notes/todo.txt")
/// while let piece = try input.read(upToCount: 1 << 20) {
///     try piece.withUnsafeBytes { try decryptor.update($0) { try output.write($0) } }
/// }
/// try decryptor.finish { try output.write($0) }
/// ```
public final class VaultContentDecryptor {
    private let keys: VaultMasterKeys
    private let file: String
    private var headerNonce: Data?
    private var cipher: AESGCM?
    private var pending: [UInt8] = []
    private let opened = UnsafeMutableRawBufferPointer.allocate(
        byteCount: VaultContent.chunkPlaintextCount, alignment: 16)
    private var chunkNumber: UInt64 = 0
    private var failure: VaultError?
    private var finished = false

    /// A decryptor for the file that errors name `file`.
    public init(keys: VaultMasterKeys, file: String) {
        self.keys = keys
        self.file = file
        pending.reserveCapacity(VaultContent.chunkCiphertextCount)
    }

    deinit { opened.deallocate() }

    /// Opens the chunks that `ciphertext` completes, handing each one's plaintext to `sink`
    /// (valid only during the call); the rest is kept for the next call.
    ///
    /// - Throws: ``VaultError`` naming the file: `.forgedHeader` or `.forgedChunk(n)`, then the
    ///   same error on every later call; or what `sink` throws.
    public func update(_ ciphertext: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        precondition(!finished, "update after finish")
        if let failure { throw failure }
        do {
            var offset = 0
            while offset < ciphertext.count {
                let wanted = (cipher == nil ? VaultContent.headerCount : VaultContent.chunkCiphertextCount)
                if pending.isEmpty && ciphertext.count - offset >= wanted {
                    // A whole header or chunk in the input: used where it is, not copied.
                    try consume(
                        UnsafeRawBufferPointer(rebasing: ciphertext[offset..<offset + wanted]), to: sink)
                    offset += wanted
                    continue
                }
                let take = Swift.min(wanted - pending.count, ciphertext.count - offset)
                pending.append(
                    contentsOf: UnsafeRawBufferPointer(rebasing: ciphertext[offset..<offset + take]))
                offset += take
                if pending.count == wanted {
                    try pending.withUnsafeBytes { try consume($0, to: sink) }
                    pending.removeAll(keepingCapacity: true)
                }
            }
        } catch let error as VaultError {
            failure = error
            throw error
        }
    }

    /// Opens the last, shorter chunk and hands its plaintext to `sink`.
    ///
    /// - Throws: ``VaultError`` naming the file: `.truncated` if the bytes ended inside the
    ///   header or inside a chunk's nonce and tag; `.forgedChunk(n)` if the last chunk does not
    ///   authenticate (which is also how a chunk cut short shows).
    public func finish(to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        precondition(!finished, "finish twice")
        finished = true
        if let failure { throw failure }
        guard cipher != nil else {
            throw VaultError(
                .truncated, item: file, "\(pending.count) bytes, shorter than the 68-byte header")
        }
        guard !pending.isEmpty else { return }
        guard pending.count > VaultContent.chunkOverhead else {
            throw VaultError(
                .truncated, item: file,
                "chunk \(chunkNumber) has \(pending.count) bytes, no more than its nonce and tag")
        }
        try pending.withUnsafeBytes { try consume($0, to: sink) }
        pending.removeAll()
    }

    /// The plaintext of the chunks that `ciphertext` completes; the rest is kept for the next call.
    ///
    /// - Throws: ``VaultError`` as ``update(_:to:)``.
    public func update(_ ciphertext: Data) throws -> Data {
        var output = Data()
        // Room for the whole chunks this completes, reserved only when one does (the
        // encryptor's update says why).
        let header = cipher == nil ? VaultContent.headerCount : 0
        let chunks =
            Swift.max(0, pending.count + ciphertext.count - header) / VaultContent.chunkCiphertextCount
        if chunks > 0 { output.reserveCapacity(chunks * VaultContent.chunkPlaintextCount) }
        try ciphertext.withUnsafeBytes { try update($0) { output.append(contentsOf: $0) } }
        return output
    }

    /// The plaintext of the last, shorter chunk.
    ///
    /// - Throws: ``VaultError`` as ``finish(to:)``.
    public func finish() throws -> Data {
        var output = Data()
        try finish { output.append(contentsOf: $0) }
        return output
    }

    /// Opens the header (the first call) or the next chunk.
    private func consume(_ bytes: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        guard let cipher, let headerNonce else {
            let header = try VaultFileHeader(opening: bytes, keys: keys, file: file)
            self.headerNonce = header.nonce
            self.cipher = try header.contentCipher(.opening)
            return
        }
        let count = bytes.count - VaultContent.chunkOverhead
        var number = chunkNumber.bigEndian
        do {
            try withUnsafeBytes(of: &number) { number in
                try headerNonce.withUnsafeBytes { headerNonce in
                    try cipher.open(
                        UnsafeRawBufferPointer(rebasing: bytes[12..<12 + count]),
                        nonce: UnsafeRawBufferPointer(rebasing: bytes[0..<12]),
                        additionalData: [number, headerNonce],
                        tag: UnsafeRawBufferPointer(rebasing: bytes[(12 + count)...]),
                        into: UnsafeMutableRawBufferPointer(rebasing: opened[0..<count]))
                }
            }
        } catch let error as VaultError where error.code == .authenticationFailed {
            throw VaultError(.forgedChunk(Int(chunkNumber)), item: file)
        }
        chunkNumber += 1
        try sink(UnsafeRawBufferPointer(rebasing: opened[0..<count]))
    }
}
