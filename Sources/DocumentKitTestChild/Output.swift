import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a line to standard output at once, unbuffered: the tests read lines as they come.
func printUnbuffered(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}
