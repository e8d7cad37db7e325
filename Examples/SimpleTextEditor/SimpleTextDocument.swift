import DocumentKit
import Foundation

/// Placeholder until the port of seed 000 lands.
@MainActor public final class SimpleTextDocument: UIDocument {}
