import DocumentKit
import Foundation

/// An ``UploadSource`` as the `InputStream` a request body is read from, so that an upload
/// streams from the source in chunks and never sits in memory whole.
///
/// The session reads the stream on its own queue while the caller of the remote waits for the
/// answer, so the source is used by one thread at a time: the caller's, before and after, the
/// session's, in between. What the source throws, and a source that gives more or fewer
/// bytes than it said, end the body early: the server then gets fewer bytes than the request
/// announced and applies nothing, and ``failure`` says why.
final class UploadStream: InputStream {
    private let source: UploadSource
    private var pending = Data()
    private var given: Int64 = 0
    private var ended = false
    private var status: Stream.Status = .notOpen
    /// What the source threw.
    private(set) var failure: (any Error)?
    /// Whether the source gave more or fewer bytes than it said.
    private(set) var sizeChanged = false
    /// The byte count the source gave before it ended or passed its size.
    var givenBytes: Int64 { given }

    /// The digest of the bytes given, when asked for.
    private var hasher: ContentHash.Hasher?

    init(_ source: UploadSource, hashing: Bool = false) {
        self.source = source
        hasher = hashing ? ContentHash.Hasher() : nil
        super.init(data: Data())
    }

    /// The digest of every byte given (once, after the body was sent), when made `hashing`.
    func digest() -> ContentHash? { hasher.take()?.finalize() }

    /// Opened a second time: the session means to send the body again, which it cannot be.
    private(set) var reopened = false

    override func open() {
        if status != .notOpen { reopened = true }
        status = .open
    }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? {
        failure ?? (sizeChanged ? CocoaError(.fileReadCorruptFile) : nil)
    }
    override var hasBytesAvailable: Bool { !ended || !pending.isEmpty }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        if pending.isEmpty, !ended { fill() }
        guard failure == nil, !sizeChanged, !reopened else {
            status = .error
            return -1
        }
        guard !pending.isEmpty else {
            status = .atEnd
            return 0
        }
        let count = min(maxLength, pending.count)
        pending.withUnsafeBytes { bytes in
            buffer.update(from: bytes.bindMemory(to: UInt8.self).baseAddress!, count: count)
        }
        pending.removeFirst(count)
        return count
    }

    /// Every byte of the source, for a body sent from memory; nil when the source threw or
    /// gave another size than it said (``failure``, ``sizeChanged``).
    func readAll() -> Data? {
        var all = Data()
        all.reserveCapacity(Int(source.size))
        while true {
            if pending.isEmpty, !ended { fill() }
            guard failure == nil, !sizeChanged else { return nil }
            guard !pending.isEmpty else { return all }
            all.append(pending)
            pending = Data()
        }
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    private func fill() {
        do {
            guard let chunk = try source.nextChunk() else {
                ended = true
                if given != source.size { fail(sizeChanged: true) }
                return
            }
            given += Int64(chunk.count)
            guard given <= source.size else { return fail(sizeChanged: true) }
            pending = chunk
            hasher?.update(pending)
        } catch {
            failure = error
            ended = true
        }
    }

    private func fail(sizeChanged: Bool) {
        self.sizeChanged = sizeChanged
        ended = true
        pending = Data()
    }
}
