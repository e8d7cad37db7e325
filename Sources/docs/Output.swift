import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes to standard output and standard error with `write(2)`: no buffering to flush
/// before exit, and a listing goes out in as few calls as its size allows.
enum Output {
    /// Writes `bytes` to standard output.
    ///
    /// - Throws: ``DocsFailure`` when standard output is closed or full.
    static func write(_ bytes: some Collection<UInt8>) throws {
        try write(bytes, to: STDOUT_FILENO)
    }

    /// Writes `text` to standard output.
    static func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write($0, to: STDOUT_FILENO) }
    }

    /// Writes `line` and a newline to standard error, ignoring failure: there is nowhere
    /// left to report it.
    static func error(_ line: String, terminated: Bool = true) {
        var text = terminated ? line + "\n" : line
        text.withUTF8 { try? write($0, to: STDERR_FILENO) }
    }

    private static func write(_ bytes: some Collection<UInt8>, to descriptor: CInt) throws {
        let done: Void? = try bytes.withContiguousStorageIfAvailable { try write($0, to: descriptor) }
        if done == nil {
            let copy = Array(bytes)
            try copy.withUnsafeBufferPointer { try write($0, to: descriptor) }
        }
    }

    private static func write(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: CInt) throws {
        guard var pointer = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let written = Glibc.write(descriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw DocsFailure.failure("cannot write the output: \(String(cString: strerror(errno)))")
            }
            pointer += written
            remaining -= written
        }
    }
}
