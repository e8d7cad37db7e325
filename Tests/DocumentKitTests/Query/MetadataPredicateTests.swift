import Foundation
import Testing

@testable import DocumentKit

/// An argument for a format, in a form test arguments can carry across tasks.
enum FormatArgument: Sendable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case strings([String])
    case stringSet(Set<String>)
    case ints([Int])
    case dates([Date])
    case number(Int)

    var value: Any {
        switch self {
        case .string(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .bool(let value): return value
        case .date(let value): return value
        case .strings(let value): return value
        case .stringSet(let value): return value
        case .ints(let value): return value
        case .dates(let value): return value
        case .number(let value): return NSNumber(value: value)
        }
    }

    var description: String { "\(value)" }
}

struct PredicateCase: Sendable, CustomTestStringConvertible {
    var format: String
    var arguments: [FormatArgument]
    var expected: Set<String>

    init(_ format: String, _ arguments: FormatArgument..., matches expected: Set<String>) {
        self.format = format
        self.arguments = arguments
        self.expected = expected
    }

    var testDescription: String { "\(format) \(arguments)" }
}

private let name = FormatArgument.string(NSMetadataItemFSNameKey)
private let size = FormatArgument.string(NSMetadataItemFSSizeKey)
private let modified = FormatArgument.string(NSMetadataItemFSContentChangeDateKey)
private let url = FormatArgument.string(NSMetadataItemURLKey)
private let type = FormatArgument.string(NSMetadataItemContentTypeKey)
private let tree = FormatArgument.string(NSMetadataItemContentTypeTreeKey)
private let all = MetadataFixture.allNames
private let texts: Set = ["notes.txt", "Notes-Old.TXT", "café.md", "deep.txt"]
/// 2021-01-01, between the first two files' dates.
private let newYear2021 = Date(timeIntervalSince1970: 1_609_459_200)

@Suite("NSPredicate(metadataFormat:)")
struct MetadataPredicateTests {
    static let comparisons: [PredicateCase] = [
        // Equality, and the modifiers on it.
        .init("%K == %@", name, .string("notes.txt"), matches: ["notes.txt"]),
        .init("%K = %@", name, .string("notes.txt"), matches: ["notes.txt"]),
        .init("%K == %@", name, .string("NOTES.TXT"), matches: []),
        .init("%K ==[c] %@", name, .string("NOTES.TXT"), matches: ["notes.txt"]),
        .init("%K == %@", name, .string("cafe.md"), matches: []),
        .init("%K ==[d] %@", name, .string("cafe.md"), matches: ["café.md"]),
        .init("%K ==[cd] %@", name, .string("CAFE.MD"), matches: ["café.md"]),
        .init("%K != %@", name, .string("notes.txt"), matches: all.subtracting(["notes.txt"])),
        .init("%K <> 'notes.txt'", name, matches: all.subtracting(["notes.txt"])),
        // LIKE with * and ?.
        .init("%K LIKE %@", name, .string("*.txt"), matches: ["notes.txt", "deep.txt"]),
        .init("%K LIKE[c] %@", name, .string("*.txt"), matches: ["notes.txt", "Notes-Old.TXT", "deep.txt"]),
        .init("%K LIKE '*'", name, matches: all),
        .init("%K LIKE 'n?tes.*'", name, matches: ["notes.txt"]),
        .init("%K LIKE '?????.txt'", name, matches: ["notes.txt"]),
        .init("%K LIKE 'caf?.md'", name, matches: ["café.md"]),
        .init("%K LIKE[d] 'cafe*'", name, matches: ["café.md"]),
        .init("%K like 'report.pdf'", name, matches: ["report.pdf"]),
        // BEGINSWITH, ENDSWITH, CONTAINS.
        .init("%K BEGINSWITH %@", name, .string("Notes"), matches: ["Notes-Old.TXT"]),
        .init("%K BEGINSWITH[c] %@", name, .string("notes"), matches: ["notes.txt", "Notes-Old.TXT"]),
        .init("%K BEGINSWITH ''", name, matches: []),
        .init("%K ENDSWITH %@", name, .string(".md"), matches: ["café.md"]),
        .init("%K ENDSWITH[c] '.txt'", name, matches: ["notes.txt", "Notes-Old.TXT", "deep.txt"]),
        .init("%K CONTAINS %@", name, .string("o"), matches: ["notes.txt", "Notes-Old.TXT", "report.pdf"]),
        .init("%K CONTAINS 'cafe'", name, matches: []),
        .init("%K CONTAINS[d] 'cafe'", name, matches: ["café.md"]),
        .init("%K CONTAINS[cd] 'CAFE'", name, matches: ["café.md"]),
        .init("%K CONTAINS[c] 'OLD'", name, matches: ["Notes-Old.TXT"]),
        // MATCHES: a regular expression for the whole name.
        .init("%K MATCHES %@", name, .string("n.*\\.txt"), matches: ["notes.txt"]),
        .init("%K MATCHES[c] 'n.*\\\\.txt'", name, matches: ["notes.txt", "Notes-Old.TXT"]),
        .init("%K MATCHES 'notes'", name, matches: []),
        // Sizes, as NSNumber, Int and literals.
        .init("%K > %d", size, .int(50), matches: ["café.md", "report.pdf"]),
        .init("%K >= %@", size, .number(100), matches: ["café.md", "report.pdf"]),
        .init("%K => 100", size, matches: ["café.md", "report.pdf"]),
        .init("%K < %@", size, .int(5), matches: ["deep.txt"]),
        .init("%K <= %ld", size, .int(5), matches: ["deep.txt", "notes.txt"]),
        .init("%K =< 5", size, matches: ["deep.txt", "notes.txt"]),
        .init("%K == 2000", size, matches: ["report.pdf"]),
        .init("%K == %@", size, .double(2000.0), matches: ["report.pdf"]),
        .init("%K > 1e3", size, matches: ["report.pdf"]),
        .init("%K > 0x3E8", size, matches: ["report.pdf"]),
        .init("%K > -1", size, matches: all),
        .init("%K BETWEEN %@", size, .ints([5, 100]), matches: ["notes.txt", "Notes-Old.TXT", "café.md"]),
        .init("%K BETWEEN {5, 100}", size, matches: ["notes.txt", "Notes-Old.TXT", "café.md"]),
        .init("%K == 'notes.txt'", size, matches: []),
        // Dates.
        .init("%K < %@", modified, .date(newYear2021), matches: ["notes.txt"]),
        .init("%K > %@", modified, .date(newYear2021), matches: all.subtracting(["notes.txt"])),
        .init("%K < CAST(631152000, 'NSDate')", modified, matches: ["notes.txt"]),
        .init(
            "%K BETWEEN %@", modified, .dates([newYear2021, Date(timeIntervalSince1970: 1_654_041_600)]),
            matches: ["Notes-Old.TXT", "café.md"]),
        .init("%K == 5", modified, matches: []),
        // IN.
        .init(
            "%K IN %@", name, .strings(["notes.txt", "report.pdf"]), matches: ["notes.txt", "report.pdf"]),
        .init("%K IN %@", name, .stringSet(["café.md", "missing"]), matches: ["café.md"]),
        .init("%K IN {'notes.txt', 'missing'}", name, matches: ["notes.txt"]),
        .init("%K IN[c] {'NOTES.TXT'}", name, matches: ["notes.txt"]),
        .init("'deep' IN %K", name, matches: ["deep.txt"]),
        // Bare attribute names, booleans, nil.
        .init("kMDItemFSName ENDSWITH 'pdf'", matches: ["report.pdf"]),
        .init("kMDItemFSSize > 50 && kMDItemFSSize < 1000", matches: ["café.md"]),
        .init("NSMetadataUbiquitousItemHasUnresolvedConflictsKey == NO", matches: all),
        .init("NSMetadataUbiquitousItemHasUnresolvedConflictsKey == %@", .bool(true), matches: []),
        .init("%K == NO", .string(NSMetadataItemIsUbiquitousKey), matches: all),
        .init("%K == nil", .string(NSMetadataUbiquitousItemDownloadingStatusKey), matches: all),
        .init("kMDItemAuthors == nil", matches: all),
        .init("kMDItemAuthors != NULL", matches: []),
        .init("kMDItemAuthors CONTAINS 'x'", matches: []),
        .init("kMDItemFSName == nil", matches: []),
        // Key paths on values.
        .init("%K.pathExtension == 'txt'", url, matches: ["notes.txt", "deep.txt"]),
        .init(
            "%K.pathExtension ==[c] %@", name, .string("TXT"),
            matches: ["notes.txt", "Notes-Old.TXT", "deep.txt"]),
        .init("NOT %K.pathExtension = ''", name, matches: all),
        .init("%K.stringByDeletingPathExtension == 'report'", name, matches: ["report.pdf"]),
        .init("%K.lastPathComponent == 'deep.txt'", url, matches: ["deep.txt"]),
        .init("%K.length == 9", name, matches: ["notes.txt"]),
        .init("kMDItemPath ENDSWITH '/sub/deep.txt'", matches: ["deep.txt"]),
        .init("%K CONTAINS '/sub/'", url, matches: ["deep.txt"]),
        // Types: several values match when one does, as in Spotlight.
        .init("%K == 'public.text'", tree, matches: texts),
        .init("%K != 'public.text'", tree, matches: ["report.pdf"]),
        .init("ANY %K == 'public.plain-text'", tree, matches: texts),
        .init("NONE %K == 'public.text'", tree, matches: ["report.pdf"]),
        .init("ALL %K BEGINSWITH 'public.'", tree, matches: ["notes.txt", "Notes-Old.TXT", "deep.txt"]),
        .init("%K.@count == 3", tree, matches: ["café.md"]),
        .init("%K == 'net.daringfireball.markdown'", type, matches: ["café.md"]),
        .init("%K UTI-CONFORMS-TO 'public.plain-text'", type, matches: texts),
        .init("%K UTI-CONFORMS-TO 'public.image'", type, matches: []),
        .init(
            "%K UTI-EQUALS 'PUBLIC.PLAIN-TEXT'", type, matches: ["notes.txt", "Notes-Old.TXT", "deep.txt"]),
        // Compounds, precedence and parentheses.
        .init("%K LIKE '*.txt' AND %K > 2", name, size, matches: ["notes.txt"]),
        .init("%K LIKE '*.txt' && %K > 2", name, size, matches: ["notes.txt"]),
        .init("%K ENDSWITH '.md' OR %K > 1000", name, size, matches: ["café.md", "report.pdf"]),
        .init("%K ENDSWITH '.md' || %K > 1000", name, size, matches: ["café.md", "report.pdf"]),
        .init("NOT %K LIKE[c] '*.txt'", name, matches: ["café.md", "report.pdf"]),
        .init("!(%K LIKE[c] '*.txt')", name, matches: ["café.md", "report.pdf"]),
        .init(
            "%K == 'report.pdf' OR %K == 'notes.txt' AND %K > 100", name, name, size, matches: ["report.pdf"]),
        .init(
            "(%K == 'report.pdf' OR %K == 'notes.txt') AND %K < 100", name, name, size, matches: ["notes.txt"]
        ),
        .init("NOT (%K < 10 OR %K > 1000)", size, size, matches: ["Notes-Old.TXT", "café.md"]),
        .init("TRUEPREDICATE", matches: all),
        .init("FALSEPREDICATE OR %K == 1", size, matches: ["deep.txt"]),
        .init("kMDItemFSName like[c] '*.TXT' and not kMDItemFSSize < 10", matches: ["Notes-Old.TXT"]),
        .init("#kMDItemFSName == \"notes.txt\"", matches: ["notes.txt"]),
    ]

    @Test(arguments: comparisons)
    func matchesTheItemsItShould(_ example: PredicateCase) async throws {
        let items = try await MetadataFixture.items.value
        try #require(Set(items.map(\.fileName)) == all)
        let predicate = try NSPredicate(
            validatingMetadataFormat: example.format, argumentArray: example.arguments.map(\.value))
        #expect(Set(items.filter { predicate.evaluate(with: $0) }.map(\.fileName)) == example.expected)
        // The one-word port says the same.
        let ported = NSPredicate(
            metadataFormat: example.format, argumentArray: example.arguments.map(\.value))
        #expect(Set(items.filter { ported.evaluate(with: $0) }.map(\.fileName)) == example.expected)
    }

    @Test func variadicArgumentsAreSubstitutedInOrder() async throws {
        let items = try await MetadataFixture.items.value
        let predicate = NSPredicate(
            metadataFormat: "%K ENDSWITH[c] %@ AND %K > %d", NSMetadataItemFSNameKey, ".TXT",
            NSMetadataItemFSSizeKey, 2)
        #expect(
            Set(items.filter(predicate.evaluate(with:)).map(\.fileName)) == ["notes.txt", "Notes-Old.TXT"])
    }

    @Test func aQueryFiltersWithAFormatPredicateAndKeepsFilteringUpdates() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (query, recorder) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.predicate = NSPredicate(metadataFormat: "%K LIKE[c] %@", NSMetadataItemFSNameKey, "*.txt")
            $0.sortDescriptors = [.init(.fileName)]
        }
        defer { query.stop() }
        #expect(query.items.map(\.fileName) == ["deep.txt", "Notes-Old.TXT", "notes.txt"])
        try folder.write("new", to: "added.TXT")
        try folder.write("new", to: "ignored.md")
        #expect(await queryEventually { recorder.count(\.added, named: "added.TXT") == 1 })
        #expect(recorder.count(\.added, named: "ignored.md") == 0)
        #expect(query.items.map(\.fileName) == ["added.TXT", "deep.txt", "Notes-Old.TXT", "notes.txt"])
    }

    @Test func blockAndClosurePredicatesAreGivenEachItem() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (blockQuery, _) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.predicate = NSPredicate { object, _ in
                (object as? NSMetadataItem)?.value(forAttribute: NSMetadataItemFSSizeKey) as? NSNumber == 20
            }
        }
        defer { blockQuery.stop() }
        #expect(blockQuery.items.map(\.fileName) == ["Notes-Old.TXT"])
        let (closureQuery, _) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.predicate = NSPredicate { item in item.fileSize >= 100 }
        }
        defer { closureQuery.stop() }
        #expect(Set(closureQuery.items.map(\.fileName)) == ["café.md", "report.pdf"])
        #expect(NSPredicate { _ in true }.evaluate(with: "not an item") == false)
    }

    @Test func compoundPredicatesCombineFormatAndBlockPredicates() async throws {
        let items = try await MetadataFixture.items.value
        let texts = NSPredicate(metadataFormat: "%K LIKE[c] '*.txt'", NSMetadataItemFSNameKey)
        let small = NSPredicate { $0.fileSize < 10 }
        let and = NSCompoundPredicate(andPredicateWithSubpredicates: [texts, small])
        let or = NSCompoundPredicate(orPredicateWithSubpredicates: [texts, small])
        let not = NSCompoundPredicate(notPredicateWithSubpredicate: texts)
        #expect(Set(items.filter(and.evaluate(with:)).map(\.fileName)) == ["notes.txt", "deep.txt"])
        #expect(
            Set(items.filter(or.evaluate(with:)).map(\.fileName)) == [
                "notes.txt", "Notes-Old.TXT", "deep.txt",
            ])
        #expect(Set(items.filter(not.evaluate(with:)).map(\.fileName)) == ["café.md", "report.pdf"])
    }

    @Test func dictionariesOfAttributesAreEvaluatedToo() {
        let predicate = NSPredicate(metadataFormat: "%K BEGINSWITH 'a' AND %K > 3", "name", "size")
        #expect(predicate.evaluate(with: ["name": "abc", "size": 4]))
        #expect(!predicate.evaluate(with: ["name": "abc", "size": 3]))
        #expect(!predicate.evaluate(with: ["name": "abc"]))
        #expect(!predicate.evaluate(with: 42))
    }

    static let malformed: [(format: String, arguments: [FormatArgument], message: String)] = [
        ("%K LIKEE %@", [name, .string("*")], "unknown operator “LIKEE” (at character 4)"),
        ("%K == ", [name], "the format ends where an attribute or a value was expected (at character 7)"),
        ("%K == %@", [name], "“%@” needs argument 2, but 1 was given (at character 7)"),
        ("%K == 'abc", [name], "the string that starts here is not closed (at character 7)"),
        ("(%K == 1", [name], "expected “)” to close the “(” at character 1, found the end of the format"),
        ("%K == 1)", [name], "unexpected “)” after a complete predicate (at character 8)"),
        ("%K == 1 extra", [name], "unexpected “extra” after a complete predicate"),
        ("%K ==[x] 'a'", [name], "unknown modifier “[x]”"),
        ("%K == 'a' AND", [name], "the format ends where an attribute or a value was expected"),
        (
            "%K 'a'", [name],
            "expected an operator such as ==, <, LIKE, BEGINSWITH or CONTAINS, found the value \"a\""
        ),
        ("SUBQUERY(kMDItemFSName, 'x').@count > 0", [], "“SUBQUERY” is not supported"),
        ("SELF == 'a'", [], "“SELF” is not supported"),
        ("%K == $NAME", [name], "substitution variables (“$NAME”) are not supported"),
        ("%K + 1 == 2", [size], "arithmetic (“+”) is not supported"),
        ("%K == %s", [name, .string("a")], "the specifier “%s” is not supported; %@, %K, %d and %f are"),
        ("%K BETWEEN 5", [size], "BETWEEN needs two bounds, as in BETWEEN {1, 10} (at character 12)"),
        ("%K MATCHES '['", [name], "“[” is not a regular expression MATCHES understands"),
        ("%K MATCHES %K", [name, name], "MATCHES needs a regular expression as a string"),
        (
            "%K == 1", [.int(42)],
            "%K needs an attribute name such as NSMetadataItemFSNameKey; argument 1 (Int)"
        ),
        ("%K == %d", [size, .string("x")], "“%d” needs an integer; argument 2 (String) is not one"),
        ("%K.foo == 1", [name], "the key path component “foo” is not supported"),
        ("%K == 12abc", [size], "“12abc” is not a number"),
        ("%K == 'a' AND OR %K == 'b'", [name, name], "found the reserved word “OR”"),
        ("%K == CAST(1, 'NSString')", [name], "CAST to “NSString” is not supported"),
        ("%K == 'a' ; %K == 'b'", [name, name], "unexpected “;”"),
    ]

    @Test(arguments: malformed)
    func aFormatItCannotParseIsAClearError(
        _ example: (format: String, arguments: [FormatArgument], message: String)
    ) {
        let error = #expect(throws: DocumentKitError.self) {
            try NSPredicate(
                validatingMetadataFormat: example.format, argumentArray: example.arguments.map(\.value))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.description.contains(example.message) == true, "\(error.map { "\($0)" } ?? "")")
        #expect(error?.description.contains("“\(example.format)”") == true)
    }

    @Test func theErrorNamesTheFormatTheProblemAndWhere() {
        let error = #expect(throws: DocumentKitError.self) {
            try NSPredicate(validatingMetadataFormat: "%K LIKEE %@", NSMetadataItemFSNameKey, "*.txt")
        }
        #expect(
            error?.description
                == "Could not parse the predicate format “%K LIKEE %@”: unknown operator “LIKEE” (at character 4)"
        )
    }

    @Test func anArgumentOfATypePredicatesDoNotCompareIsRefused() {
        struct Opaque {}
        let error = #expect(throws: DocumentKitError.self) {
            try NSPredicate(validatingMetadataFormat: "%K == %@", NSMetadataItemFSNameKey, Opaque())
        }
        #expect(
            error?.description.contains(
                "%@ needs a string, number, date, URL, array or nil; argument 2 (Opaque)")
                == true)
    }

    @Test func theOneWordPortStopsTheProgramOnAFormatItCannotParse() async {
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(metadataFormat: "%K LIKEE %@", NSMetadataItemFSNameKey, "*.txt")
        }
    }
}
