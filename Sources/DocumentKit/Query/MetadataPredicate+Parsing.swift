import Foundation

extension MetadataPredicate {
    /// Parses `format`, substituting `arguments` for its `%@`, `%K`, `%d` and `%f`
    /// specifiers in order. Arguments beyond those the format uses are ignored, as
    /// `NSPredicate(format:)` ignores them.
    ///
    /// - Throws: ``DocumentKitError`` with `.invalidArgument`, naming the problem and the
    ///   character where it is, for a format it cannot parse or does not support.
    init(format: String, arguments: [Any]) throws {
        var parser = try Parser(format: format, arguments: arguments)
        self.root = try parser.parse()
        self.format = format
    }

    /// A recursive-descent parser of `NSPredicate`'s format grammar: `OR` binds loosest,
    /// then `AND`, then `NOT`; then comparisons of two expressions.
    struct Parser {
        enum Token {
            /// A bare identifier: an attribute name or a reserved word.
            case word(String)
            /// An identifier after `#`: always an attribute name.
            case escapedWord(String)
            /// A key path substituted for `%K`.
            case keyPath(String)
            /// A literal, or an argument substituted for `%@`, `%d` or `%f`.
            case value(MetadataValue)
            case symbol(String)
            /// The letters of a `[cd]` modifier.
            case modifier(String)
            case end
        }

        let format: String
        private var tokens: [(token: Token, offset: Int)] = []
        private var index = 0

        init(format: String, arguments: [Any]) throws {
            self.format = format
            self.tokens = try Self.tokenize(Array(format), arguments: arguments, format: format)
        }

        // MARK: Predicates

        mutating func parse() throws -> Node {
            let node = try parseOr()
            guard case .end = current else {
                throw failure("unexpected \(describe(current)) after a complete predicate")
            }
            return node
        }

        private mutating func parseOr() throws -> Node {
            var node = try parseAnd()
            while isWord("OR") || isSymbol("||") {
                advance()
                node = .or(node, try parseAnd())
            }
            return node
        }

        private mutating func parseAnd() throws -> Node {
            var node = try parseNot()
            while isWord("AND") || isSymbol("&&") {
                advance()
                node = .and(node, try parseNot())
            }
            return node
        }

        private mutating func parseNot() throws -> Node {
            if isWord("NOT") || isSymbol("!") {
                advance()
                return .not(try parseNot())
            }
            return try parsePrimary()
        }

        private mutating func parsePrimary() throws -> Node {
            if isSymbol("(") {
                let opening = offset
                advance()
                let node = try parseOr()
                guard isSymbol(")") else {
                    throw failure(
                        "expected “)” to close the “(” at character \(opening + 1), found \(describe(current))"
                    )
                }
                advance()
                return node
            }
            if isWord("TRUEPREDICATE") {
                advance()
                return .constant(true)
            }
            if isWord("FALSEPREDICATE") {
                advance()
                return .constant(false)
            }
            return .comparison(try parseComparison())
        }

        private mutating func parseComparison() throws -> Comparison {
            var quantifier: Quantifier?
            if isWord("ANY") || isWord("SOME") {
                quantifier = .anyElement
            } else if isWord("ALL") {
                quantifier = .everyElement
            } else if isWord("NONE") {
                quantifier = .noElement
            }
            if quantifier != nil { advance() }
            let left = try parseExpression()
            let op = try parseOperator()
            var options = Options()
            if case .modifier(let letters) = current {
                for letter in letters.lowercased() {
                    switch letter {
                    case "c": options.caseInsensitive = true
                    case "d": options.diacriticInsensitive = true
                    // Strings are compared as Swift compares them, normalized or not.
                    case "n": break
                    default:
                        throw failure(
                            "unknown modifier “[\(letters)]”: [c] (case-insensitive), [d] "
                                + "(diacritic-insensitive) and [cd] are supported")
                    }
                }
                advance()
            }
            let rightOffset = offset
            let right = try parseExpression()
            var comparison = Comparison(
                quantifier: quantifier, left: left, op: op, options: options, right: right, expression: nil)
            switch op {
            case .between:
                var count: Int?
                if case .aggregate(let bounds) = right { count = bounds.count }
                if case .constant(.array(let bounds)) = right { count = bounds.count }
                guard count == 2 else {
                    throw failure("BETWEEN needs two bounds, as in BETWEEN {1, 10}", at: rightOffset)
                }
            case .matches:
                guard case .constant(let pattern) = right, case .string = pattern,
                    let text = pattern.text(
                        Options(caseInsensitive: false, diacriticInsensitive: options.diacriticInsensitive))
                else {
                    throw failure("MATCHES needs a regular expression as a string", at: rightOffset)
                }
                do {
                    // MATCHES matches the whole string, as ICU's matches() does.
                    let expression = try NSRegularExpression(
                        pattern: "(?:" + text + ")\\z",
                        options: options.caseInsensitive ? [.caseInsensitive] : [])
                    comparison.expression = DocumentQuery.Unchecked(value: expression)
                } catch {
                    throw failure(
                        "“\(text)” is not a regular expression MATCHES understands", at: rightOffset)
                }
            default: break
            }
            return comparison
        }

        private mutating func parseOperator() throws -> Operator {
            let token = current
            let op: Operator
            switch token {
            case .symbol("=="), .symbol("="): op = .equal
            case .symbol("!="), .symbol("<>"): op = .notEqual
            case .symbol("<"): op = .less
            case .symbol("<="), .symbol("=<"): op = .lessOrEqual
            case .symbol(">"): op = .greater
            case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
            case .word(let word):
                switch word.uppercased() {
                case "LIKE": op = .like
                case "BEGINSWITH": op = .beginsWith
                case "ENDSWITH": op = .endsWith
                case "CONTAINS": op = .contains
                case "MATCHES": op = .matches
                case "IN": op = .isIn
                case "BETWEEN": op = .between
                case "UTI-CONFORMS-TO": op = .conformsToType
                case "UTI-EQUALS": op = .equalsType
                default: throw failure("unknown operator “\(word)”")
                }
            case .symbol(let symbol) where ["+", "-", "*", "/", "**"].contains(symbol):
                throw failure("arithmetic (“\(symbol)”) is not supported")
            default:
                throw failure(
                    "expected an operator such as ==, <, LIKE, BEGINSWITH or CONTAINS, found \(describe(token))"
                )
            }
            advance()
            return op
        }

        // MARK: Expressions

        private mutating func parseExpression() throws -> Expression {
            let token = current
            switch token {
            case .value(let value):
                advance()
                if isSymbol(".") {
                    throw failure("a key path must start with an attribute name, not a value")
                }
                return .constant(value)
            case .keyPath(let keyPath):
                advance()
                let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard let name = parts.first, !name.isEmpty, !parts.contains(where: \.isEmpty) else {
                    throw failure(
                        "“\(keyPath)”, given for %K, is not a key path", at: tokens[index - 1].offset)
                }
                var steps = try parts.dropFirst().map { try step(named: $0, at: tokens[index - 1].offset) }
                steps += try parseSteps()
                return .attribute(name, steps: steps)
            case .escapedWord(let name):
                advance()
                return .attribute(name, steps: try parseSteps())
            case .word(let word):
                switch word.uppercased() {
                case "TRUE", "YES":
                    advance()
                    return .constant(.integer(1))
                case "FALSE", "NO":
                    advance()
                    return .constant(.integer(0))
                case "NULL", "NIL":
                    advance()
                    return .constant(.null)
                case "CAST":
                    return try parseCast()
                case "SELF", "SUBQUERY", "FUNCTION", "FIRST", "LAST", "SIZE", "ANYKEY", "INDEX", "FETCH":
                    throw failure(
                        "“\(word)” is not supported: predicates compare item attributes, such as "
                            + "NSMetadataItemFSNameKey, with values")
                case "AND", "OR", "NOT", "LIKE", "BEGINSWITH", "ENDSWITH", "CONTAINS", "MATCHES", "IN",
                    "BETWEEN",
                    "ANY", "SOME", "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE", "UTI-CONFORMS-TO",
                    "UTI-EQUALS":
                    throw failure(
                        "expected an attribute or a value, found the reserved word “\(word)” (write #\(word) "
                            + "for an attribute of that name)")
                default:
                    advance()
                    return .attribute(word, steps: try parseSteps())
                }
            case .symbol("-"):
                advance()
                switch current {
                case .value(.integer(let number)):
                    advance()
                    return .constant(.integer(-number))
                case .value(.real(let number)):
                    advance()
                    return .constant(.real(-number))
                default:
                    throw failure("expected a number after “-”, found \(describe(current))")
                }
            case .symbol("{"):
                advance()
                var elements: [Expression] = []
                if !isSymbol("}") {
                    elements.append(try parseExpression())
                    while isSymbol(",") {
                        advance()
                        elements.append(try parseExpression())
                    }
                }
                guard isSymbol("}") else {
                    throw failure("expected “,” or “}” in a list, found \(describe(current))")
                }
                advance()
                return .aggregate(elements)
            case .end:
                throw failure("the format ends where an attribute or a value was expected")
            default:
                throw failure("expected an attribute or a value, found \(describe(token))")
            }
        }

        private mutating func parseSteps() throws -> [Step] {
            var steps: [Step] = []
            while isSymbol(".") {
                advance()
                switch current {
                case .word(let name), .escapedWord(let name):
                    steps.append(try step(named: name, at: offset))
                    advance()
                default:
                    throw failure("expected a key path component after “.”, found \(describe(current))")
                }
            }
            return steps
        }

        private func step(named name: String, at offset: Int) throws -> Step {
            guard let step = Step(rawValue: name) else {
                throw failure(
                    "the key path component “\(name)” is not supported; "
                        + Step.allCases.map(\.rawValue).joined(separator: ", ") + " are", at: offset)
            }
            return step
        }

        /// `CAST(value, 'NSDate')`, a date from seconds since 2001, or `CAST('5', 'NSNumber')`.
        private mutating func parseCast() throws -> Expression {
            advance()
            guard isSymbol("(") else { throw failure("expected “(” after CAST") }
            advance()
            let valueOffset = offset
            let value = try parseExpression()
            guard isSymbol(",") else { throw failure("expected “,” in CAST(value, 'type')") }
            advance()
            guard case .value(.string(let type)) = current else {
                throw failure("expected a type name such as 'NSDate' in CAST")
            }
            let typeOffset = offset
            advance()
            guard isSymbol(")") else { throw failure("expected “)” to close CAST") }
            advance()
            switch (type, value) {
            case ("NSDate", .constant(.integer(let seconds))):
                return .constant(.date(Date(timeIntervalSinceReferenceDate: TimeInterval(seconds))))
            case ("NSDate", .constant(.real(let seconds))):
                return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case ("NSNumber", .constant(.string(let text))):
                if let number = Int64(text) { return .constant(.integer(number)) }
                if let number = Double(text) { return .constant(.real(number)) }
                throw failure("“\(text)” is not a number", at: valueOffset)
            case ("NSDate", _), ("NSNumber", _):
                throw failure(
                    "CAST to \(type) needs a constant \(type == "NSDate" ? "number" : "string")",
                    at: valueOffset)
            default:
                throw failure(
                    "CAST to “\(type)” is not supported; 'NSDate' and 'NSNumber' are", at: typeOffset)
            }
        }

        // MARK: Tokens

        private var current: Token { tokens[index].token }
        private var offset: Int { tokens[index].offset }

        private mutating func advance() {
            if index < tokens.count - 1 { index += 1 }
        }

        private func isWord(_ word: String) -> Bool {
            if case .word(let found) = current { return found.uppercased() == word }
            return false
        }

        private func isSymbol(_ symbol: String) -> Bool {
            if case .symbol(let found) = current { return found == symbol }
            return false
        }

        private func describe(_ token: Token) -> String {
            switch token {
            case .word(let word): return "“\(word)”"
            case .escapedWord(let word): return "“#\(word)”"
            case .keyPath(let keyPath): return "the key path “\(keyPath)”"
            case .value(let value): return "the value \(value.literal)"
            case .symbol(let symbol): return "“\(symbol)”"
            case .modifier(let letters): return "the modifier “[\(letters)]”"
            case .end: return "the end of the format"
            }
        }

        private func failure(_ message: String, at offset: Int? = nil) -> DocumentKitError {
            Self.failure(message, at: offset ?? self.offset, in: format)
        }

        static func failure(_ message: String, at offset: Int, in format: String) -> DocumentKitError {
            DocumentKitError(
                DocumentKitError.Code.invalidArgument, operation: "parse the predicate format “\(format)”",
                url: nil,
                detail: "\(message) (at character \(offset + 1))")
        }

        private static func tokenize(_ characters: [Character], arguments: [Any], format: String) throws -> [(
            token: Token, offset: Int
        )] {
            var tokens: [(token: Token, offset: Int)] = []
            var i = 0
            var argumentIndex = 0
            func fail(_ message: String, _ offset: Int) -> DocumentKitError {
                failure(message, at: offset, in: format)
            }
            func isIdentifierStart(_ c: Character) -> Bool { c.isLetter || c == "_" || c == "@" }
            func isIdentifierPart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "@" }
            func identifier(from start: Int) -> (String, Int) {
                var end = start
                while end < characters.count && isIdentifierPart(characters[end]) { end += 1 }
                return (String(characters[start..<end]), end)
            }
            while i < characters.count {
                let c = characters[i]
                let start = i
                if c.isWhitespace {
                    i += 1
                    continue
                }
                switch c {
                case "\"", "'":
                    var text = ""
                    var closed = false
                    i += 1
                    while i < characters.count {
                        let d = characters[i]
                        if d == c {
                            closed = true
                            i += 1
                            break
                        }
                        if d == "\\" && i + 1 < characters.count {
                            let escaped = characters[i + 1]
                            switch escaped {
                            case "n": text.append("\n")
                            case "t": text.append("\t")
                            case "r": text.append("\r")
                            case "\"", "'", "\\": text.append(escaped)
                            // Kept for LIKE and MATCHES, whose patterns have escapes of their own.
                            default: text += "\\" + String(escaped)
                            }
                            i += 2
                            continue
                        }
                        text.append(d)
                        i += 1
                    }
                    guard closed else { throw fail("the string that starts here is not closed", start) }
                    tokens.append((.value(.string(text)), start))
                case "%":
                    var j = i + 1
                    var specifier = "%"
                    while j < characters.count && "lhqzjtL".contains(characters[j]) {
                        specifier.append(characters[j])
                        j += 1
                    }
                    guard j < characters.count else {
                        throw fail("“\(specifier)” is not a whole specifier", start)
                    }
                    let conversion = characters[j]
                    specifier.append(conversion)
                    i = j + 1
                    guard "@KdiufFeEgGxXo".contains(conversion) else {
                        throw fail(
                            "the specifier “\(specifier)” is not supported; %@, %K, %d and %f are", start)
                    }
                    guard argumentIndex < arguments.count else {
                        throw fail(
                            "“\(specifier)” needs argument \(argumentIndex + 1), but \(arguments.count) "
                                + (arguments.count == 1 ? "was" : "were") + " given", start)
                    }
                    let argument = MetadataValue.unwrapped(arguments[argumentIndex])
                    argumentIndex += 1
                    let described =
                        "argument \(argumentIndex) (\(argument.map { "\(type(of: $0))" } ?? "nil"))"
                    switch conversion {
                    case "K":
                        guard let keyPath = argument as? String else {
                            throw fail(
                                "%K needs an attribute name such as NSMetadataItemFSNameKey; \(described) "
                                    + "is not a string", start)
                        }
                        tokens.append((.keyPath(keyPath), start))
                    case "@":
                        guard let value = MetadataValue(argument) else {
                            throw fail(
                                "%@ needs a string, number, date, URL, array or nil; \(described) is none of "
                                    + "these", start)
                        }
                        tokens.append((.value(value), start))
                    case "f", "F", "e", "E", "g", "G":
                        switch MetadataValue(argument) {
                        case .integer(let number)?: tokens.append((.value(.real(Double(number))), start))
                        case .real(let number)?: tokens.append((.value(.real(number)), start))
                        default: throw fail("“\(specifier)” needs a number; \(described) is not one", start)
                        }
                    default:
                        guard case .integer(let number)? = MetadataValue(argument) else {
                            throw fail("“\(specifier)” needs an integer; \(described) is not one", start)
                        }
                        tokens.append((.value(.integer(number)), start))
                    }
                case "$":
                    let (name, _) = identifier(from: i + 1)
                    throw fail(
                        "substitution variables (“$\(name)”) are not supported; pass the value as an argument "
                            + "for %@", start)
                case "[":
                    guard let close = characters[i...].firstIndex(of: "]") else {
                        throw fail("the “[” of a modifier is not closed", start)
                    }
                    tokens.append((.modifier(String(characters[(i + 1)..<close])), start))
                    i = close + 1
                case "#":
                    let (name, end) = identifier(from: i + 1)
                    guard !name.isEmpty else { throw fail("expected an attribute name after “#”", start) }
                    tokens.append((.escapedWord(name), start))
                    i = end
                case _ where c.isASCII && c.isNumber,
                    "."
                where i + 1 < characters.count && characters[i + 1].isASCII && characters[i + 1].isNumber:
                    let (value, end) = try number(characters, from: i, format: format)
                    tokens.append((.value(value), start))
                    i = end
                case _ where isIdentifierStart(c):
                    var (word, end) = identifier(from: i)
                    // UTI-CONFORMS-TO and UTI-EQUALS are the only words with hyphens.
                    if word.uppercased() == "UTI" {
                        for suffix in ["-CONFORMS-TO", "-EQUALS"] {
                            let candidate = characters[end...].prefix(suffix.count)
                            if String(candidate).uppercased() == suffix {
                                word += String(candidate)
                                end += suffix.count
                                break
                            }
                        }
                    }
                    tokens.append((.word(word), start))
                    i = end
                default:
                    let pair = i + 1 < characters.count ? String(characters[i...(i + 1)]) : ""
                    if ["==", "!=", "<=", ">=", "=>", "=<", "<>", "&&", "||", "**"].contains(pair) {
                        tokens.append((.symbol(pair), start))
                        i += 2
                    } else if "(){},.<>=!-+*/".contains(c) {
                        tokens.append((.symbol(String(c)), start))
                        i += 1
                    } else {
                        throw fail("unexpected “\(c)”", start)
                    }
                }
            }
            tokens.append((.end, characters.count))
            return tokens
        }

        /// A number literal: decimal (with a fraction or an exponent it is a real), or
        /// `0x`, `0o`, `0b` integers.
        private static func number(_ characters: [Character], from start: Int, format: String) throws -> (
            MetadataValue, Int
        ) {
            var end = start
            while end < characters.count
                && (characters[end].isLetter || characters[end].isNumber || characters[end] == "."
                    || ((characters[end] == "-" || characters[end] == "+") && end > start
                        && "eE".contains(characters[end - 1]) && !characters[start...].starts(with: "0x")))
            {
                end += 1
            }
            let text = String(characters[start..<end])
            let lower = text.lowercased()
            for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lower.hasPrefix(prefix) {
                guard let value = Int64(lower.dropFirst(2), radix: radix) else {
                    throw failure("“\(text)” is not a number", at: start, in: format)
                }
                return (.integer(value), end)
            }
            if let value = Int64(text) { return (.integer(value), end) }
            if let value = Double(text) { return (.real(value), end) }
            throw failure("“\(text)” is not a number", at: start, in: format)
        }
    }
}

extension MetadataValue {
    /// The value as a format string would write it, for messages.
    var literal: String {
        switch self {
        case .null: return "nil"
        case .string(let string): return "\"\(string)\""
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .date(let date): return "\(date)"
        case .url(let url): return url.absoluteString
        case .array(let values): return "{" + values.map(\.literal).joined(separator: ", ") + "}"
        }
    }
}
