import Foundation

/// How long an HTTP request to a remote may take, whatever the server does: an allowance every
/// request has, and beyond it a least average rate.
///
/// A request fails once it has run longer than ``allowance`` plus the time its bytes so far
/// (sent and received) take at ``leastRate``: at any moment it must have moved at least
/// `leastRate × (elapsed − allowance)` bytes. So its overall deadline grows with its size as
/// long as bytes keep coming at the least rate (a 1 GiB download over a slow line goes on), and
/// a server that answers a byte every few seconds, or holds a whole answer back, fails the
/// request soon after the allowance, with an error naming the method and the URL. The
/// session's own timeout (seconds without a byte) still applies besides.
///
/// The defaults: 60 seconds, then 4 KiB/s. A minute covers what a real server takes before its
/// first byte (a PROPFIND of a large folder, the `fsync` after a large PUT, an S3 copy) many
/// times over; 4 KiB/s is a line too slow to sync over (a 10 MB document would take 40
/// minutes), and a server that cannot keep it up is better reported than waited for: the next
/// pass tries again.
///
/// For example:
///
/// ```swift
/// var configuration = WebDAVRemote.Configuration(url: url)
/// configuration.deadline = RequestDeadline(allowance: 120, leastRate: 16 << 10)
/// ```
public struct RequestDeadline: Sendable, Equatable {
    /// Seconds every request has, whatever its size.
    public var allowance: TimeInterval
    /// Bytes a second a request must move on average beyond the allowance.
    public var leastRate: Double

    /// A deadline of `allowance` seconds, then `leastRate` bytes a second.
    public init(allowance: TimeInterval = 60, leastRate: Double = 4096) {
        self.allowance = allowance
        self.leastRate = leastRate
    }

    /// The deadline of a poll for a remote's change marker (``Remote/changeMarker()``): a
    /// poll that gets no answer within 10 seconds is asked again later, never waited for.
    static let changeMarker = RequestDeadline(allowance: 10, leastRate: 4096)

    /// Seconds a request that has moved `bytes` may have run.
    func seconds(forMoving bytes: Int64) -> TimeInterval {
        allowance + Double(bytes) / max(leastRate, 1)
    }
}
