/// A random number generator whose whole sequence follows from one seed: xoshiro256**,
/// seeded through SplitMix64.
///
/// The simulation draws every choice from one of these, so that a seed printed with a failure
/// replays the same run. The algorithms are Blackman and Vigna's: xoshiro256** passes the
/// usual statistical batteries, and SplitMix64 spreads a small seed (0, 1, 2...) over the
/// 256-bit state so that neighbouring seeds give unrelated sequences.
///
/// For example:
///
/// ```swift
/// var generator = SeededGenerator(seed: 42)
/// let roll = Int.random(in: 1...6, using: &generator)   // the same on every run
/// ```
public struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// The seed this generator started from.
    public let seed: UInt64

    /// A generator at the start of the sequence of `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        var mixer = seed
        func splitMix() -> UInt64 {
            mixer &+= 0x9E37_79B9_7F4A_7C15
            var z = mixer
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    /// A new generator whose sequence is independent of this one's, drawn from it: one for
    /// each device of a simulation, so that adding draws to one does not shift the others.
    public mutating func split() -> SeededGenerator {
        SeededGenerator(seed: next())
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    public static func == (lhs: SeededGenerator, rhs: SeededGenerator) -> Bool {
        lhs.seed == rhs.seed && lhs.state == rhs.state
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(state.0)
        hasher.combine(state.1)
        hasher.combine(state.2)
        hasher.combine(state.3)
    }
}
