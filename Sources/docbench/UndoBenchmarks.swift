import DocumentKit
import Foundation

@MainActor final class Counter {
    var value = 0
}

/// `undo.register`: 1,000,000 registrations in groups of 10, then undo of every group,
/// against the same work done with a bare array of closures (the least any undo stack costs).
///
/// An operation is one registration or one undone action, so the run is 2,000,000 operations;
/// the second row gives the same run per registration. Most of the time is Foundation's
/// `NotificationCenter.post`, which Apple's semantics require eight times per group.
@MainActor func benchmarkUndoRegistration(registrations: Int) -> [BenchmarkRow] {
    let groupSize = 10
    let target = Counter()

    func measureUndoManager() -> Double {
        let manager = UndoManager()
        manager.groupsByEvent = false
        let start = now()
        for group in 0..<(registrations / groupSize) {
            manager.beginUndoGrouping()
            for step in 0..<groupSize {
                let value = group &* groupSize &+ step
                manager.registerUndo(withTarget: target) { $0.value = value }
            }
            manager.endUndoGrouping()
        }
        while manager.canUndo { manager.undo() }
        return now() - start
    }

    func measureFloor() -> Double {
        var stack: [[(Counter) -> Void]] = []
        let start = now()
        for group in 0..<(registrations / groupSize) {
            var actions: [(Counter) -> Void] = []
            actions.reserveCapacity(groupSize)
            for step in 0..<groupSize {
                let value = group &* groupSize &+ step
                actions.append { $0.value = value }
            }
            stack.append(actions)
        }
        while let actions = stack.popLast() {
            for action in actions.reversed() { action(target) }
        }
        return now() - start
    }

    var measured: [Double] = []
    var floor: [Double] = []
    for _ in 0..<3 {
        measured.append(measureUndoManager())
        floor.append(measureFloor())
    }
    let seconds = measured.sorted()[1]
    let floorSeconds = floor.sorted()[1]
    let operations = Double(registrations * 2)
    return [
        BenchmarkRow(
            name: "undo.register", unit: "ops/s", value: operations / seconds,
            floor: operations / floorSeconds,
            floorDescription: "array of closures, same grouping; op = a registration or an undone action",
            ratio: seconds / floorSeconds, target: "at least 1,000,000 ops/s",
            met: operations / seconds >= 1_000_000),
        BenchmarkRow(
            name: "undo.register.per-registration", unit: "regs/s", value: Double(registrations) / seconds,
            floor: Double(registrations) / floorSeconds,
            floorDescription: "the same run counted per registration", ratio: seconds / floorSeconds,
            target: "informational", met: true),
    ]
}
