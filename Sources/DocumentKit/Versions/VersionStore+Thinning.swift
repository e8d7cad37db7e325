import Foundation

extension VersionStore {
    /// How long history versions are kept, and how sparsely as they age.
    ///
    /// Every version younger than ``keepsEverythingFor`` stays; after that one a minute (the
    /// newest of each clock minute) until ``keepsOneAMinuteFor``, then one an hour until
    /// ``keepsHourlyFor``, then one a day until ``keepsDailyFor``; older versions are dropped.
    /// Conflict versions are never thinned: resolving and removing them is the app's call.
    /// Versions made on purpose rather than by an autosave (what an explicit save replaced,
    /// a sync's merge base, the contents a restore or a download replaced, a version the app
    /// added) are kept through the minute tier, so that the base a sync merges from later is
    /// not thinned away by the typing after it, nor the text the user saved by hand; the
    /// hourly and daily tiers thin them as any other.
    ///
    /// For example:
    ///
    /// ```swift
    /// var policy = VersionStore.ThinningPolicy()
    /// policy.keepsDailyFor = 90 * 24 * 3600     // a quarter instead of a month
    /// let store = VersionStore(root: folder, thinningPolicy: policy)
    /// ```
    public struct ThinningPolicy: Sendable, Equatable {
        /// Versions younger than this are all kept. None by default: one a minute is enough
        /// for the autosaves of a minute of typing.
        public var keepsEverythingFor: TimeInterval = 0
        /// Up to this age one version a minute is kept. One hour by default.
        public var keepsOneAMinuteFor: TimeInterval = 3600
        /// Up to this age one version an hour is kept. One day by default.
        public var keepsHourlyFor: TimeInterval = 24 * 3600
        /// Up to this age one version a day is kept; older ones are dropped. Thirty days by default.
        public var keepsDailyFor: TimeInterval = 30 * 24 * 3600

        public init() {}

        /// The identifiers of the versions to drop, given when each entered the store.
        ///
        /// - Parameter kept: Versions made on purpose: never dropped younger than
        ///   ``keepsOneAMinuteFor``, and taking no minute's place from an autosave.
        public func versionsToDrop(
            _ versions: [(id: String, date: Date)], now: Date, keeping kept: Set<String> = []
        ) -> Set<String> {
            var drop: Set<String> = []
            var buckets: Set<Int64> = []
            for version in versions.sorted(by: { $0.date > $1.date }) {
                let age = now.timeIntervalSince(version.date)
                if age < keepsEverythingFor { continue }
                let seconds = version.date.timeIntervalSince1970
                let bucket: Int64
                // Each tier ends where it ends, whichever of the limits are set shorter.
                if age >= keepsDailyFor {
                    drop.insert(version.id)
                    continue
                } else if age >= keepsHourlyFor {
                    bucket = Int64((seconds / 86400).rounded(.down)) * 3 + 2
                } else if age >= keepsOneAMinuteFor {
                    bucket = Int64((seconds / 3600).rounded(.down)) * 3 + 1
                } else {
                    if kept.contains(version.id) { continue }
                    bucket = Int64((seconds / 60).rounded(.down)) * 3
                }
                if !buckets.insert(bucket).inserted { drop.insert(version.id) }
            }
            return drop
        }
    }
}
