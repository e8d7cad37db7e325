import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a line to standard output at once, unbuffered: the tests read lines as they come.
func printUnbuffered(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Ends a child its test forgot: at once when the test process is gone (the child was
/// handed to another parent), else after `limit`, printing "error=timed out". The limit is
/// long: a test waits its turn among a whole run's tests, so minutes may pass between two of
/// its steps while it is still there to finish.
func startWatchdog(limit: Duration = .seconds(600)) {
    let parent = getppid()
    let deadline = ContinuousClock.now + limit
    Thread.detachNewThread {
        while getppid() == parent {
            if ContinuousClock.now > deadline {
                printUnbuffered("error=timed out")
                _exit(3)
            }
            usleep(500_000)
        }
        _exit(3)
    }
}
