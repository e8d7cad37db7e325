#if !canImport(UIKit)
    /// UIKit's name for ``Document``, so that `class MyDocument: UIDocument` ports unchanged.
    public typealias UIDocument = Document
#endif
