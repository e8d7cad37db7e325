import Foundation

extension NSPredicate {
    /// Creates a predicate from a format string over metadata attributes: the port of
    /// `NSPredicate(format:)`, which Foundation on Linux does not have, for an
    /// ``DocumentQuery`` (`NSMetadataQuery`).
    ///
    /// The format has `NSPredicate`'s grammar, as Spotlight queries use it over item
    /// attributes, so porting a query changes one word:
    ///
    /// ```swift
    /// query.predicate = NSPredicate(metadataFormat: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt")
    /// query.predicate = NSPredicate(
    ///     metadataFormat: "%K ENDSWITH[c] '.md' AND %K > %@", NSMetadataItemFSNameKey,
    ///     NSMetadataItemFSSizeKey, 1024)
    /// ```
    ///
    /// What it understands:
    /// - Attributes by name, bare (`kMDItemFSName`, `#name` for a reserved word) or through
    ///   `%K`, optionally followed by `.pathExtension`, `.lastPathComponent`,
    ///   `.deletingPathExtension`, `.stringByDeletingPathExtension`, `.path`, `.length` or
    ///   `.@count` (`%K.pathExtension == 'txt'` with `NSMetadataItemURLKey`).
    /// - Values: `%@` (a string, number, `Bool`, `Date`, `URL`, array, set or nil), `%d`, `%i`,
    ///   `%ld` and the other integer specifiers, `%f`, quoted strings, numbers (`12`, `-1.5`,
    ///   `1e6`, `0x1F`), `TRUE`/`YES`, `FALSE`/`NO`, `NULL`/`NIL`, lists `{1, 2}`, and
    ///   `CAST(seconds since 2001, 'NSDate')`.
    /// - Comparisons: `==` (`=`), `!=` (`<>`), `<`, `<=` (`=<`), `>`, `>=` (`=>`), `BETWEEN
    ///   {low, high}`, `IN`, and on strings `LIKE` (`*` any run of characters, `?` one
    ///   character), `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `MATCHES` (a regular expression
    ///   for the whole string), each with the modifiers `[c]` (case-insensitive), `[d]`
    ///   (diacritic-insensitive) and `[cd]`; and `UTI-CONFORMS-TO`, `UTI-EQUALS` on types.
    ///   Sizes compare as numbers and dates as dates; values of different kinds (a number and
    ///   a date) are never equal, nor ordered.
    /// - `AND` (`&&`), `OR` (`||`), `NOT` (`!`), parentheses, `TRUEPREDICATE`,
    ///   `FALSEPREDICATE`, and `ANY`, `SOME`, `ALL`, `NONE` before a comparison.
    ///
    /// An attribute with several values (`NSMetadataItemContentTypeTreeKey`) matches when one
    /// of them does, as in Spotlight (`kMDItemContentTypeTree == 'public.text'`), except that
    /// `!=` holds when none is equal. An attribute the item lacks (`NSMetadataItemFSCreationDateKey`
    /// where the file system does not record it) equals only `nil`. A URL compares as its
    /// path with the string operators. Like `NSString`, an empty string begins, ends and
    /// contains nothing.
    ///
    /// Not understood, each with its own message: substitution variables (`$NAME`),
    /// `SELF`, `SUBQUERY`, functions, arithmetic, and the specifiers other than those above.
    /// A format it cannot parse stops the program with that message, as `NSPredicate(format:)`
    /// raises an exception on Apple platforms; use ``init(validatingMetadataFormat:_:)`` for
    /// a format that comes from a user.
    ///
    /// The predicate evaluates a ``DocumentQuery/Item`` or a `[String: Any]` dictionary of
    /// attribute values; anything else has no attributes.
    ///
    /// - Parameters:
    ///   - predicateFormat: The format string.
    ///   - arguments: The values for its `%@`, `%K`, `%d` and `%f` specifiers, in order.
    public convenience init(metadataFormat predicateFormat: String, _ arguments: Any...) {
        self.init(metadataFormat: predicateFormat, argumentArray: arguments)
    }

    /// Creates a predicate from a format string over metadata attributes, with its
    /// arguments in an array: the port of `NSPredicate(format:argumentArray:)`.
    ///
    /// See ``init(metadataFormat:_:)`` for the grammar. A format it cannot parse stops the
    /// program.
    public convenience init(metadataFormat predicateFormat: String, argumentArray arguments: [Any]?) {
        let parsed: MetadataPredicate
        do {
            parsed = try MetadataPredicate(format: predicateFormat, arguments: arguments ?? [])
        } catch {
            fatalError("NSPredicate(metadataFormat:): \(error)")
        }
        self.init(parsed)
    }

    /// Creates a predicate from a format string over metadata attributes, or throws when the
    /// format is one it cannot parse: for formats that come from users.
    ///
    /// For example:
    ///
    /// ```swift
    /// do {
    ///     query.predicate = try NSPredicate(validatingMetadataFormat: searchField.text)
    /// } catch {
    ///     show(error)  // Could not parse the predicate format “kMDItemFSName LIKEE '*'”: unknown operator …
    /// }
    /// ```
    ///
    /// See ``init(metadataFormat:_:)`` for the grammar.
    ///
    /// - Throws: ``DocumentKitError`` with `.invalidArgument`, saying what is wrong and at
    ///   which character.
    public convenience init(validatingMetadataFormat predicateFormat: String, _ arguments: Any...) throws {
        try self.init(validatingMetadataFormat: predicateFormat, argumentArray: arguments)
    }

    /// Creates a predicate from a format string over metadata attributes with its arguments
    /// in an array, or throws when the format is one it cannot parse.
    ///
    /// - Throws: ``DocumentKitError`` with `.invalidArgument`, saying what is wrong and at
    ///   which character.
    public convenience init(validatingMetadataFormat predicateFormat: String, argumentArray arguments: [Any]?)
        throws
    {
        self.init(try MetadataPredicate(format: predicateFormat, arguments: arguments ?? []))
    }

    /// Creates a predicate from a Swift closure over query results: the Swift-native way to
    /// filter a ``DocumentQuery``.
    ///
    /// For example:
    ///
    /// ```swift
    /// query.predicate = NSPredicate { item in item.fileSize > 1024 && item.contentType == "public.plain-text" }
    /// ```
    ///
    /// A query runs the closure on its private queue. Evaluated against anything but an
    /// item, the predicate is false.
    public convenience init(_ isIncluded: @escaping @Sendable (DocumentQuery.Item) -> Bool) {
        self.init(block: { object, _ in (object as? DocumentQuery.Item).map(isIncluded) ?? false })
    }

    convenience init(_ parsed: MetadataPredicate) {
        self.init(block: { object, _ in parsed.evaluate(object) })
    }
}
