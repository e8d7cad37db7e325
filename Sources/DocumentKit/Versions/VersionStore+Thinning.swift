import Foundation

extension VersionStore {
    /// How long history versions are kept, and how sparsely as they age.
    ///
    /// Every version younger than ``keepsEverythingFor`` stays; after that one an hour (the
    /// newest of each clock hour) until ``keepsHourlyFor``, then one a day until
    /// ``keepsDailyFor``; older versions are dropped. Conflict versions are never thinned:
    /// resolving and removing them is the app's call.
    ///
    /// For example:
    ///
    /// ```swift
    /// var policy = VersionStore.ThinningPolicy()
    /// policy.keepsDailyFor = 90 * 24 * 3600     // a quarter instead of a month
    /// let store = VersionStore(root: folder, thinningPolicy: policy)
    /// ```
    public struct ThinningPolicy: Sendable, Equatable {
        /// Versions younger than this are all kept. One hour by default.
        public var keepsEverythingFor: TimeInterval = 3600
        /// Up to this age one version an hour is kept. One day by default.
        public var keepsHourlyFor: TimeInterval = 24 * 3600
        /// Up to this age one version a day is kept; older ones are dropped. Thirty days by default.
        public var keepsDailyFor: TimeInterval = 30 * 24 * 3600

        public init() {}

        /// The identifiers of the versions to drop, given when each entered the store.
        public func versionsToDrop(_ versions: [(id: String, date: Date)], now: Date) -> Set<String> {
            var drop: Set<String> = []
            var buckets: Set<Int64> = []
            for version in versions.sorted(by: { $0.date > $1.date }) {
                let age = now.timeIntervalSince(version.date)
                if age < keepsEverythingFor { continue }
                let seconds = version.date.timeIntervalSince1970
                let bucket: Int64
                if age < keepsHourlyFor {
                    bucket = Int64((seconds / 3600).rounded(.down)) * 2
                } else if age < keepsDailyFor {
                    bucket = Int64((seconds / 86400).rounded(.down)) * 2 + 1
                } else {
                    drop.insert(version.id)
                    continue
                }
                if !buckets.insert(bucket).inserted { drop.insert(version.id) }
            }
            return drop
        }
    }
}
