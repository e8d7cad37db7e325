/// Runs a Document child command; returns false if `name` is not one.
func runDocumentCommand(_ name: String, _ arguments: [String]) -> Bool {
    false
}
