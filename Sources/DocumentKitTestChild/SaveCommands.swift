/// Runs a safe-save child command; returns false if `name` is not one.
func runSaveCommand(_ name: String, _ arguments: [String]) -> Bool {
    false
}
