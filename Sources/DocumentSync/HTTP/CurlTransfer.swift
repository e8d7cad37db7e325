import CCurl
import DocumentKit
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request over a libcurl easy handle, performed on the calling thread: the request's
/// headers and body go out, the answer's status line, headers and body come back, and every
/// byte on the way is counted against the request's deadline.
///
/// libcurl calls back (headers, body, upload bytes, progress) on the same thread, inside
/// `curl_easy_perform`: the transfer is used by one thread, and needs no lock.
final class CurlTransfer {
    /// Where the answer's body goes.
    private let destination: HTTPTransport.Destination
    private let deadline: RequestDeadline
    private let started = ContinuousClock.now
    private let description: String

    /// The body to send, and how much of it has gone.
    private let body: HTTPBody
    private var sent = 0
    /// Whether the stream body has been read from: it cannot be sent again after that.
    private var streamRead = false

    /// The status of the last status line (a `100 Continue` is followed by another).
    private var status: Int?
    private var headers: [String: String] = [:]
    private var kept = Data()
    private var streamed: Int64 = 0
    /// A large body's chunk being filled, once it is given in chunks (``receive(_:)``), in a
    /// buffer of `buffers`; `filled` bytes so far.
    private var buffers: ChunkBuffers?
    private var filling: UnsafeMutableRawBufferPointer?
    private var filled = 0
    /// Why the transfer was stopped from a callback, which libcurl's own error hides.
    private var failure: HTTPTransportFailure?

    init(
        _ request: URLRequest, body: HTTPBody, into destination: HTTPTransport.Destination,
        deadline: RequestDeadline
    ) {
        self.destination = destination
        self.deadline = deadline
        self.body = body
        description = "\(request.httpMethod ?? "GET") \(HTTPTransport.shown(request.url))"
    }

    /// Performs `request` on `handle` (reset first; its connections kept) and returns the
    /// answer, checking the server's certificate against the authorities in `caFile` alone
    /// when given, else against the system's.
    ///
    /// - Throws: ``HTTPTransportFailure`` when no complete answer came.
    func perform(
        _ request: URLRequest, on handle: UnsafeMutableRawPointer, timeout: TimeInterval, caFile: String?
    )
        throws(HTTPTransportFailure)
        -> HTTPAnswer
    {
        curl_easy_reset(handle)
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        let method = request.httpMethod ?? "GET"
        let code = errorBuffer.withUnsafeMutableBufferPointer { errors -> CURLcode in
            let context = Unmanaged.passUnretained(self).toOpaque()
            _ = dk_curl_setopt_string(handle, CURLOPT_URL, request.url?.absoluteString ?? "")
            _ = dk_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            _ = dk_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = dk_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
            _ = dk_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
            if let caFile {
                // That file's authorities, and not the system's folder of them besides.
                _ = dk_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)
                _ = dk_curl_setopt_string(handle, CURLOPT_CAPATH, nil)
            }
            // No byte for `timeout` seconds (connecting, or in either direction) fails it.
            let seconds = max(1, Int(timeout.rounded(.up)))
            _ = dk_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, seconds)
            _ = dk_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = dk_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, seconds)
            _ = dk_curl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeader)
            _ = dk_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
            _ = dk_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWrite)
            _ = dk_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
            if case .sink = destination {
                // A large body arrives in pieces of up to this, not libcurl's 16 KiB: a
                // 200 MiB download took 13,000 reads and as many polls (curl's own: 100 KiB).
                _ = dk_curl_setopt_long(handle, CURLOPT_BUFFERSIZE, Self.receiveBufferSize)
            }
            _ = dk_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = dk_curl_setopt_progress_callback(handle, curlProgress)
            _ = dk_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)

            var fields = request.allHTTPHeaderFields ?? [:]
            switch body {
            case .none:
                switch method {
                case "GET": _ = dk_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
                case "HEAD": _ = dk_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
                default: _ = dk_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
                }
            case .data(let data):
                sendBody(handle, size: Int64(data.count), method: method, context: context)
            case .stream(let stream, let size):
                stream.open()
                sendBody(handle, size: size, method: method, context: context)
            }
            if case .none = body {
            } else {
                // Sent at once, without waiting for a 100 Continue; and no form type libcurl
                // would otherwise name for a body of a request that names none.
                fields["Expect"] = ""
                if !fields.keys.contains(where: { $0.lowercased() == "content-type" }) {
                    fields["Content-Type"] = ""
                }
            }
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                // "Name:" with nothing after it removes a header libcurl would add.
                headerList = curl_slist_append(headerList, value.isEmpty ? "\(name):" : "\(name): \(value)")
            }
            _ = dk_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
            return curl_easy_perform(handle)
        }
        if case .stream(let stream, _) = body { stream.close() }
        // What arrived after the last whole chunk is the answer's body, as a small body is.
        if let buffers, let buffer = filling {
            filling = nil
            if failure == nil, code == CURLE_OK {
                kept = buffers.chunk(of: buffer, count: filled)
            } else {
                buffers.giveBack(buffer)
            }
        }
        if let failure { throw failure }
        guard code == CURLE_OK else {
            let written = String(
                decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = written.isEmpty ? String(cString: curl_easy_strerror(code)) : written
            throw Self.failure(code, message: "\(description): \(message)", caFile: caFile)
        }
        guard let status else { throw .connectionLost("\(description): the server gave no HTTP answer") }
        return HTTPAnswer(method: method, status: status, headers: headers, body: kept, streamed: streamed)
    }

    /// The most bytes libcurl gives ``receive(_:)`` at once, for an answer that may be large
    /// (256 KiB).
    static let receiveBufferSize = 256 << 10
    /// The most bytes libcurl asks ``read(into:)`` for at once, and sends at once (512 KiB;
    /// its default, 64 KiB, made a 200 MiB upload 3,200 sends and twice as many polls).
    static let sendBufferSize = 512 << 10

    /// Sets the request's body, `size` bytes read by `curlRead`, with `method`.
    private func sendBody(
        _ handle: UnsafeMutableRawPointer, size: Int64, method: String, context: UnsafeMutableRawPointer
    ) {
        if method == "PUT" {
            _ = dk_curl_setopt_long(handle, CURLOPT_UPLOAD, 1)
            _ = dk_curl_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
        } else {
            _ = dk_curl_setopt_long(handle, CURLOPT_POST, 1)
            _ = dk_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size))
            if method != "POST" { _ = dk_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
        }
        if size > Self.sendBufferSize {
            _ = dk_curl_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, Self.sendBufferSize)
        }
        _ = dk_curl_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlRead)
        _ = dk_curl_setopt_pointer(handle, CURLOPT_READDATA, context)
        _ = dk_curl_setopt_seek_callback(handle, curlSeek)
        _ = dk_curl_setopt_pointer(handle, CURLOPT_SEEKDATA, context)
    }

    /// The transport's form of a libcurl failure; a certificate that did not verify says
    /// against whose authorities it was checked (`caFile`'s, or the system's) and what to do.
    static func failure(_ code: CURLcode, message: String, caFile: String? = nil) -> HTTPTransportFailure {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .unreachable(message)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            if let caFile {
                return .insecure(
                    "\(message); the server's certificate is not one the authorities in \(caFile) (--ca-file) vouch for"
                )
            }
            return .insecure(
                "\(message); the server's certificate is not one the system's authorities vouch for: "
                    + "for a private authority, give its certificate with --ca-file FILE")
        case CURLE_SSL_CACERT_BADFILE:
            return .insecure(
                "\(message); the certificate authority file \(caFile ?? "of the system") could not be read")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED:
            return .insecure(message)
        default: return .connectionLost(message)
        }
    }

    // MARK: - What libcurl calls

    /// A line of the answer's head.
    fileprivate func header(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Without the line's end and the blanks around: bytes, not a Character walk (a head's
        // lines are ASCII, and this runs for every line of every answer).
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if line.starts(with: "HTTP/".utf8) {
            // A new head: an interim answer's (100 Continue) headers are not the answer's.
            let parts = line.split(separator: 0x20, maxSplits: 2)
            status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) : nil
            headers = [:]
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        var nameEnd = colon
        while nameEnd > line.startIndex, isBlank(line[nameEnd - 1]) { nameEnd -= 1 }
        var valueStart = colon + 1
        while valueStart < line.endIndex, isBlank(line[valueStart]) { valueStart += 1 }
        let name = String(decoding: line[line.startIndex..<nameEnd], as: UTF8.self).lowercased()
        let value = String(decoding: line[valueStart..<line.endIndex], as: UTF8.self)
        headers[name] = headers[name].map { "\($0), \(value)" } ?? value
    }

    /// A piece of the answer's body; false stops the transfer (``failure`` says why).
    fileprivate func receive(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard failure == nil else { return false }
        switch destination {
        case .memory(let limit):
            guard kept.count + bytes.count <= limit else {
                failure = .bodyTooLarge(limit: limit)
                return false
            }
            kept.append(contentsOf: bytes)
        case .sink(let sink, let limit):
            guard status == 200 else {
                // An error answer's first words are enough to say what it is.
                kept.append(contentsOf: bytes.prefix(max(limit - kept.count, 0)))
                return true
            }
            guard let buffers else {
                kept.append(contentsOf: bytes)
                // Kept while the body may still be a small one, then given on in chunks (in
                // buffers used again, without a copy): the consumer's work a call is paid once
                // a MiB, not once a piece.
                if kept.count <= limit { return true }
                let buffers = ChunkBuffers(size: RemoteChunk.size)
                self.buffers = buffers
                let first = kept
                kept = Data()
                return first.withUnsafeBytes { give($0, to: sink, buffers) }
            }
            return give(UnsafeRawBufferPointer(bytes), to: sink, buffers)
        }
        return true
    }

    /// Copies `bytes` into the chunk being filled, giving each chunk to `sink` once full;
    /// false when the sink took none (``failure`` says why).
    private func give(_ bytes: UnsafeRawBufferPointer, to sink: BodySink, _ buffers: ChunkBuffers) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let buffer = filling ?? buffers.lend()
            filling = buffer
            let count = min(bytes.count - offset, buffer.count - filled)
            (buffer.baseAddress! + filled).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
            filled += count
            offset += count
            guard filled == buffer.count else { continue }
            filling = nil
            filled = 0
            guard sink.give(buffers.chunk(of: buffer, count: buffer.count)) else {
                failure = .localFile("the download's bytes were not taken")
                return false
            }
            streamed += Int64(buffer.count)
        }
        return true
    }

    /// Fills `buffer` with the next bytes of the request's body: how many; 0 at its end; nil
    /// to stop the transfer.
    fileprivate func read(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        switch body {
        case .none: return 0
        case .data(let data):
            let count = min(buffer.count, data.count - sent)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { bytes in
                let start = bytes.baseAddress!.advanced(by: sent)
                buffer.baseAddress!.update(from: start.assumingMemoryBound(to: UInt8.self), count: count)
            }
            sent += count
            return count
        case .stream(let stream, _):
            streamRead = true
            let count = stream.read(buffer.baseAddress!, maxLength: buffer.count)
            guard count >= 0 else {
                failure = .localFile("\(description): the upload's source could not be read")
                return nil
            }
            sent += count
            return count
        }
    }

    /// Asked to go back to the start of the body, to send the request again: libcurl does so
    /// by itself when a kept-alive connection it reused broke before any answer came. Refused
    /// once any of the body went: the server may have taken the request (a write, a lock),
    /// and sending it again blindly could do it twice. The request fails as a lost connection
    /// instead, and the caller settles it by reading the remote back.
    fileprivate func rewind() -> Bool {
        guard sent > 0 || streamRead else { return true }
        failure = .connectionLost(
            "\(description): the connection broke after the request went; it is not sent again blindly")
        return false
    }

    /// Whether the transfer is still within its deadline, `moved` bytes sent and received.
    fileprivate func withinDeadline(moved: Int64) -> Bool {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds >= deadline.seconds(forMoving: moved) else { return true }
        let rate = ByteCountFormatter.string(fromByteCount: Int64(deadline.leastRate), countStyle: .binary)
        failure = .tooSlow(
            "\(description) moved \(moved) bytes in \(Int(seconds.rounded())) s: "
                + "slower than \(rate)/s after \(Int(deadline.allowance.rounded())) s allowed")
        return false
    }
}

// libcurl's callbacks: C functions, each finding its transfer in the context pointer.

private func transfer(_ context: UnsafeMutableRawPointer?) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
}

private let curlHeader: dk_curl_data_callback = { buffer, size, count, context in
    let length = size * count
    buffer.map { pointer in
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            transfer(context).header(UnsafeBufferPointer(start: bytes, count: length))
        }
    }
    return length
}

private let curlWrite: dk_curl_data_callback = { buffer, size, count, context in
    let length = size * count
    guard let buffer else { return length }
    let taken = buffer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        transfer(context).receive(UnsafeBufferPointer(start: bytes, count: length))
    }
    return taken ? length : 0
}

private let curlRead: dk_curl_data_callback = { buffer, size, count, context in
    guard let buffer else { return 0 }
    let length = size * count
    let read = buffer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        transfer(context).read(into: UnsafeMutableBufferPointer(start: bytes, count: length))
    }
    return read ?? Int(CURL_READFUNC_ABORT)
}

private let curlSeek: dk_curl_seek_callback = { context, offset, origin in
    guard offset == 0, origin == SEEK_SET, transfer(context).rewind() else {
        return Int32(CURL_SEEKFUNC_CANTSEEK)
    }
    return Int32(CURL_SEEKFUNC_OK)
}

private let curlProgress: dk_curl_progress_callback = { context, _, downloaded, _, uploaded in
    transfer(context).withinDeadline(moved: Int64(downloaded) + Int64(uploaded)) ? 0 : 1
}
