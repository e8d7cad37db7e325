/// Runs an UndoManager child command; returns false if `name` is not one.
func runUndoCommand(_ name: String, _ arguments: [String]) -> Bool {
    false
}
