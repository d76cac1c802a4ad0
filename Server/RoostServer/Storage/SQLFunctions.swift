import CSQLite
import Foundation
import RoostCore

/// SQL functions the query compiler relies on, registered on every connection:
/// - `roost_regexp(value, pattern, options)`: 1 when the string matches (`$regex`);
/// - `roost_geo_distance(lat1, lng1, lat2, lng2)`: great-circle distance in radians;
/// - `roost_geo_in_polygon(lat, lng, '[[lat,lng],...]')`: 1 when the point is inside;
/// - `roost_text_score(value, term, language, flags)`: a `$text` relevance, 0 for no match (flags: 1 case, 2 diacritics sensitive);
/// - `roost_text_words(value, json_type)`: a field's words as its text index keeps them (`TextIndex.storedWords`);
/// - `roost_text_stage(index)`: notes that the current transaction staged words for a text index (`TextIndex.flush`);
/// - `roost_path_values(data, 'a.b.c')`: the JSON array of the values a dot path reaches through arrays (`PathValues`);
/// - `roost_number(data, 'key')`: `json_extract(data, '$.key')` for a Number field, without parsing the object (`TopLevelNumber`).
/// See https://sqlite.org/c3ref/create_function.html
enum SQLFunctions {
    static func register(on handle: OpaquePointer, budget: QueryBudget, stagedTextIndexes: StagedTextIndexes) {
        let cache = Unmanaged.passRetained(RegexCache(budget: budget)).toOpaque()
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(handle, "roost_regexp", 3, flags, cache, regexp, nil, nil, releaseCache)
        sqlite3_create_function_v2(handle, "roost_geo_distance", 4, flags, nil, geoDistance, nil, nil, nil)
        sqlite3_create_function_v2(handle, "roost_geo_in_polygon", 3, flags, nil, geoInPolygon, nil, nil, nil)
        sqlite3_create_function_v2(handle, "roost_path_values", 2, flags, nil, pathValues, nil, nil, nil)
        sqlite3_create_function_v2(handle, "roost_number", 2, flags | SQLITE_INNOCUOUS, nil, topLevelNumber, nil, nil, nil)
        let matchers = Unmanaged.passRetained(TextMatcherCache()).toOpaque()
        sqlite3_create_function_v2(handle, "roost_text_score", 4, flags, matchers, textScore, nil, nil, releaseTextMatchers)
        sqlite3_create_function_v2(handle, "roost_text_words", 2, flags, nil, textWords, nil, nil, nil)
        // Not deterministic: it notes the index on the connection. The connection outlives its handle: unretained.
        sqlite3_create_function_v2(handle, "roost_text_stage", 1, SQLITE_UTF8, Unmanaged.passUnretained(stagedTextIndexes).toOpaque(),
                                   textStage, nil, nil, nil)
    }

    /// The arguments after `value` of `roost_text_score`.
    static func textScoreArguments(_ search: TextSearch) -> [SQLValue] {
        [.text(search.term), search.language.map(SQLValue.text) ?? .null,
         .integer((search.caseSensitive ? 1 : 0) | (search.diacriticSensitive ? 2 : 0))]
    }
}

/// Matchers of one connection, by search (a query evaluates one search on many rows).
private final class TextMatcherCache {
    var matchers: [String: TextMatcher] = [:]

    func matcher(term: String, language: String?, flags: Int32) -> TextMatcher {
        let key = "\(flags)/\(language ?? "")/\(term)"
        if let cached = matchers[key] { return cached }
        let matcher = TextMatcher(TextSearch(term: term, language: language, caseSensitive: flags & 1 != 0, diacriticSensitive: flags & 2 != 0))
        if matchers.count > 100 { matchers.removeAll() }
        matchers[key] = matcher
        return matcher
    }
}

private let releaseTextMatchers: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    if let pointer { Unmanaged<TextMatcherCache>.fromOpaque(pointer).release() }
}

private let textScore: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let cachePointer = sqlite3_user_data(context), let subject = text(arguments[0]), let term = text(arguments[1]) else {
        sqlite3_result_double(context, 0)
        return
    }
    let cache = Unmanaged<TextMatcherCache>.fromOpaque(cachePointer).takeUnretainedValue()
    let matcher = cache.matcher(term: term, language: text(arguments[2]), flags: sqlite3_value_int(arguments[3]))
    sqlite3_result_double(context, matcher.score(subject))
}

/// Called by the text indexes' triggers (`TextIndex`) on every write of an indexed field.
private let textWords: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let argument = arguments[0], sqlite3_value_type(argument) == SQLITE_TEXT, let bytes = sqlite3_value_text(argument) else {
        sqlite3_result_null(context)
        return
    }
    // ASCII text (most) as it is: the `ascii` tokenizer finds in it the words `TextIndex.indexWords` would give
    // (runs of letters and digits, lowercased), without a round trip through Swift strings.
    let isArray = text(arguments[1]) == "array"
    if !isArray, UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(argument))).allSatisfy({ $0 < 0x80 }) {
        sqlite3_result_value(context, argument)
        return
    }
    guard let value = text(argument) else {
        sqlite3_result_null(context)
        return
    }
    roost_sqlite3_result_text(context, TextIndex.storedWords(value, isArray: isArray), -1)
}

private let textStage: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    if let arguments, let pointer = sqlite3_user_data(context), let base = text(arguments[0]) {
        Unmanaged<StagedTextIndexes>.fromOpaque(pointer).takeUnretainedValue().note(base)
    }
    sqlite3_result_null(context)
}

/// Compiled patterns of one connection (used by one thread at a time, like the connection).
private final class RegexCache {
    let budget: QueryBudget
    var compiled: [String: CompiledRegex] = [:]
    private var cachedBytes = 0

    init(budget: QueryBudget) { self.budget = budget }

    func regex(_ pattern: String, options: String) -> CompiledRegex? {
        let key = options + "/" + pattern
        if let cached = compiled[key] { return cached }
        guard let regex = CompiledRegex(pattern: pattern, options: options) else { return nil }
        // Bounded by count and by pattern size: a client sending many different 32 KB patterns (each JIT-compiled)
        // must not grow every reader's cache without end.
        if compiled.count > 500 || cachedBytes + key.utf8.count > 1 << 20 {
            compiled.removeAll()
            cachedBytes = 0
        }
        compiled[key] = regex
        cachedBytes += key.utf8.count
        return regex
    }
}

private let releaseCache: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    if let pointer { Unmanaged<RegexCache>.fromOpaque(pointer).release() }
}

private func text(_ value: OpaquePointer?) -> String? {
    guard let value, sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
}

private func number(_ value: OpaquePointer?) -> Double? {
    guard let value else { return nil }
    let type = sqlite3_value_type(value)
    guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return nil }
    return sqlite3_value_double(value)
}

/// Each call may take a while (see `CompiledRegex`), so each asks the query's budget first: the progress
/// handler alone runs only between SQLite's own steps.
private let regexp: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let cachePointer = sqlite3_user_data(context) else { return }
    let cache = Unmanaged<RegexCache>.fromOpaque(cachePointer).takeUnretainedValue()
    guard !cache.budget.isExhausted else {
        sqlite3_result_error_code(context, SQLITE_INTERRUPT)
        return
    }
    guard let value = arguments[0], sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value),
        let pattern = text(arguments[1]), let regex = cache.regex(pattern, options: text(arguments[2]) ?? "")
    else {
        sqlite3_result_int(context, 0)
        return
    }
    switch regex.matches(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value)))) {
    case .match: sqlite3_result_int(context, 1)
    case .noMatch: sqlite3_result_int(context, 0)
    case .tooExpensive:
        cache.budget.regexGaveUp = true
        sqlite3_result_error_code(context, SQLITE_INTERRUPT)
    }
}

private let geoDistance: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let lat1 = number(arguments[0]), let lng1 = number(arguments[1]),
        let lat2 = number(arguments[2]), let lng2 = number(arguments[3])
    else {
        sqlite3_result_null(context)
        return
    }
    sqlite3_result_double(context, GeoMath.distance(lat1, lng1, lat2, lng2))
}

private let geoInPolygon: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let lat = number(arguments[0]), let lng = number(arguments[1]), let polygon = text(arguments[2]),
        let points = (try? JSONSerialization.jsonObject(with: Data(polygon.utf8))) as? [[Double]], points.allSatisfy({ $0.count >= 2 })
    else {
        sqlite3_result_int(context, 0)
        return
    }
    sqlite3_result_int(context, GeoMath.contains(points.map { ($0[0], $0[1]) }, lat, lng) ? 1 : 0)
}

private let pathValues: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let data = text(arguments[0]), let path = text(arguments[1]),
        let document = try? JSONParser.parse(data)
    else {
        roost_sqlite3_result_text(context, "[]", -1)
        return
    }
    let reached = JSON.array(PathValues.values(in: document, path: path.split(separator: ".").map(String.init))).jsonText
    roost_sqlite3_result_text(context, reached, -1)
}

private let topLevelNumber: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
    guard let arguments, let data = sqlite3_value_text(arguments[0]) else {
        sqlite3_result_null(context)
        return
    }
    let dataCount = Int(sqlite3_value_bytes(arguments[0]))
    guard let key = sqlite3_value_text(arguments[1]) else {
        sqlite3_result_null(context)
        return
    }
    let keyCount = Int(sqlite3_value_bytes(arguments[1]))
    switch TopLevelNumber.value(in: UnsafeBufferPointer(start: data, count: dataCount), key: UnsafeBufferPointer(start: key, count: keyCount)) {
    case .integer(let value): sqlite3_result_int64(context, value)
    case .real(let value): sqlite3_result_double(context, value)
    case .null: sqlite3_result_null(context)
    case .other:
        switch TopLevelNumber.extracted(String(cString: data), key: String(cString: key)) {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .real(let value): sqlite3_result_double(context, value)
        case .text(let text): roost_sqlite3_result_text(context, text, -1)
        }
    }
}

/// Spherical geometry on degrees.
enum GeoMath {
    /// Haversine great-circle distance, in radians.
    static func distance(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
        let toRadians = Double.pi / 180
        let dLat = (lat2 - lat1) * toRadians, dLng = (lng2 - lng1) * toRadians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * toRadians) * cos(lat2 * toRadians) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * atan2(sqrt(a), sqrt(max(0, 1 - a)))
    }

    /// Even-odd ray casting in the latitude/longitude plane, as Parse's Postgres adapter does; a point on an
    /// edge or corner is inside, as MongoDB's `$polygon` counts it.
    static func contains(_ polygon: [(Double, Double)], _ lat: Double, _ lng: Double) -> Bool {
        if onBoundary(polygon, lat, lng) { return true }
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let (latI, lngI) = polygon[i], (latJ, lngJ) = polygon[j]
            if (lngI > lng) != (lngJ > lng), lat < (latJ - latI) * (lng - lngI) / (lngJ - lngI) + latI {
                inside.toggle()
            }
            j = i
        }
        return inside
    }

    private static func onBoundary(_ polygon: [(Double, Double)], _ lat: Double, _ lng: Double) -> Bool {
        var j = polygon.count - 1
        for i in polygon.indices {
            let (latI, lngI) = polygon[i], (latJ, lngJ) = polygon[j]
            j = i
            guard (min(latI, latJ)...max(latI, latJ)).contains(lat), (min(lngI, lngJ)...max(lngI, lngJ)).contains(lng) else { continue }
            let cross = (latJ - latI) * (lng - lngI) - (lngJ - lngI) * (lat - latI)
            if abs(cross) <= 1e-12 * max(1, abs(latJ - latI) + abs(lngJ - lngI)) { return true }
        }
        return false
    }
}
