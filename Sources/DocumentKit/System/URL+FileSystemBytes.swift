import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension URL {
    /// The bytes the system calls see for this file URL's path.
    package var fileSystemBytes: [UInt8] {
        withUnsafeFileSystemRepresentation { pointer in
            guard let pointer else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        }
    }

    /// A file URL for the bytes of a path.
    ///
    /// Foundation's `URL` on Linux replaces bytes that are not UTF-8 with U+FFFD, so a URL
    /// made from such a path names another file: match items by their bytes where it matters.
    package init(fileSystemBytes bytes: [UInt8]) {
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        self.init(fileURLWithFileSystemRepresentation: terminated, isDirectory: false, relativeTo: nil)
    }
}
