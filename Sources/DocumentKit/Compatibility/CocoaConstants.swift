import Foundation

// Constants that code written for Apple's SDKs names through `import Cocoa` or `import UIKit`
// and that Foundation on Linux lacks. Each has Apple's value, so a port that compares or logs it
// sees what it sees on a Mac.

#if !canImport(ObjectiveC)
    /// Carbon's "unimplemented routine" result code (`unimpErr`, -4 in MacErrors.h), which
    /// Xcode's NSDocument template throws from the reading and writing methods it leaves to the
    /// app: `throw NSError(domain: NSOSStatusErrorDomain, code: unimpErr, userInfo: nil)`.
    public var unimpErr: Int { -4 }

    extension NSData.WritingOptions {
        /// Apple's older name for ``atomic`` (`NSAtomicWrite`, the same bit): the data is written
        /// to an auxiliary file first, which then replaces the original.
        public static var atomicWrite: NSData.WritingOptions { .atomic }
    }
#endif
