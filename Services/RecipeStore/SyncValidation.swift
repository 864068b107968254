import Foundation
import RecipeModel
import RecipeProtocol

/// What a record from another replica must be before it is merged: the same
/// rules as a person's write (lengths, ranges, URL schemes, photo rules), sound
/// clocks, and ids of the right shape. A replica is a client like any other: a
/// peer that sends something a person could not write has that record held back
/// (never written to the tables) and reported in `recipes sync status`.
enum SyncValidation {
    /// How far ahead of this replica's clock a remote stamp may be (one hour): a replica
    /// whose clock runs ahead by more is refused rather than allowed to pin every clock.
    static let maxClockAheadMilliseconds: Int64 = 3_600_000
    /// The most replicas one version vector may name.
    static let maxVersionVectorEntries = 256
    /// The longest replica id accepted.
    static let maxReplicaIDLength = SyncOps.Retire.maxReplicaIDLength
    /// The most fields a record may carry.
    static let maxFields = 1_024
    // Made once: every record of every page is read through them (they are values, safe to share).
    private static let encoder = WireJSONEncoder()
    private static let decoder = WireJSONDecoder()

    /// Checks `record` (and throws `invalid_argument` naming the record and what is wrong).
    static func check(_ record: SyncRecord, now: Int64) throws(ServiceError) {
        func fail(_ message: String) -> ServiceError {
            ServiceError(.invalidArgument, "\(record.kind.rawValue) \(record.id.prefix(64)): \(message)")
        }
        guard record.fields.count <= maxFields, record.clocks.count <= maxFields else {
            throw fail("the record has \(record.fields.count) fields and \(record.clocks.count) clocks; at most \(maxFields) of each are allowed")
        }
        for (name, index) in record.fieldClocks where record.fields[name] == nil || !record.clocks.indices.contains(index) {
            throw fail("field \(name.prefix(40)) has clock \(index), but the record has no such field or clock")
        }
        for name in record.fields.keys where record.fieldClocks[name] == nil {
            throw fail("field \(name.prefix(40)) has no clock")
        }
        for clock in record.clocks {
            if let problem = clockProblem(clock, now: now) { throw fail(problem) }
        }
        if let problem = valuesProblem(record) { throw fail(problem) }
    }

    /// Why the values of `record` (its clocks aside) are not what a replica accepts, or `nil`. A local write's record
    /// is checked with this before it is stored (`SyncLog.capture`), so nothing a person writes here is held back elsewhere.
    /// `draftValidated`: a recipe's values are a draft's that was just validated (`RecipeDraft.validate`): only the
    /// shapes of its fields are checked, not the draft again.
    static func valuesProblem(_ record: SyncRecord, draftValidated: Bool = false) -> String? {
        guard let deleted = record.fields[SyncRecord.deletedField], deleted.bool != nil else {
            return "the record has no \(SyncRecord.deletedField) flag (true or false)"
        }
        guard record.fields.count <= maxFields else { return "the record has \(record.fields.count) fields; at most \(maxFields) are allowed" }
        for (name, value) in record.fields {
            if let problem = fieldProblem(record.kind, name, value) { return problem }
        }
        if draftValidated && record.kind == .recipe { return nil }
        return mergedProblem(record.kind, id: record.id, record.states)
    }

    /// Why the record's values, as the tables would hold them, could not be written by a person (or `nil`).
    static func mergedProblem(_ kind: SyncKind, id: String, _ states: [String: SyncField]) -> String? {
        valuesProblem(kind, id: id, kind == .recipe ? SyncLog.assembled(states) : states.mapValues(\.value))
    }

    /// The shape of set elements and kept conflicts, which are fields of their own.
    static func fieldProblem(_ kind: SyncKind, _ name: String, _ value: JSONValue) -> String? {
        if name.hasPrefix(SyncRecord.photoPrefix) {
            guard kind == .recipe, isCanonicalUUID(String(name.dropFirst(SyncRecord.photoPrefix.count))) else {
                return "field \(name.prefix(60)) is not photo:<UUID in upper case> of a recipe"
            }
            guard value != .null else { return nil }
            let mediaTypes = Set(ImageKind.allCases.map(\.mediaType))
            guard let photo = value.object, let hash = photo["sha256"]?.string, RecipeStore.isHash(hash),
                  let bytes = photo["byteCount"]?.int, (1...RecipeVault.maxPhotoBytes).contains(bytes),
                  let mediaType = photo["mediaType"]?.string, mediaTypes.contains(mediaType),
                  let position = photo["position"]?.number, position.isFinite, abs(position) < 1e12 else {
                return "\(name) must be null or {sha256: 64 lowercase hex digits, byteCount: 1 to \(RecipeVault.maxPhotoBytes), mediaType: \(mediaTypes.sorted().joined(separator: ", ")), position: a number}"
            }
            return nil
        }
        if name.hasPrefix(SyncRecord.keywordPrefix) {
            let keyword = String(name.dropFirst(SyncRecord.keywordPrefix.count))
            guard kind == .recipe, !RecipeDraft.isBlank(keyword), keyword.isWithin(characters: RecipeDraft.Limits.keywordLength),
                  keyword == keyword.trimmingCharacters(in: .whitespaces) else {
                return "field \(name.prefix(60)) is not keyword:<1 to \(RecipeDraft.Limits.keywordLength) characters (\(String.bytesPerCharacter) bytes of UTF-8 a character)> of a recipe"
            }
            guard value == .null || (value.number.map { $0.isFinite && abs($0) < 1e12 } ?? false) else {
                return "\(name.prefix(60)) must be null or a position (a number)"
            }
            return nil
        }
        if name.hasPrefix(SyncRecord.conflictPrefix) {
            guard kind != .recipe, isCanonicalUUID(String(name.dropFirst(SyncRecord.conflictPrefix.count))),
                  let object = value.object, object["field"]?.string != nil, object["value"] != nil,
                  let state = object["state"]?.string, ["open", "dismissed", "resolved"].contains(state),
                  value.canonicalText.utf8.count <= 100_000 else {
                return "field \(name.prefix(60)) is not a kept conflict: conflict:<UUID> → {field, value, state: open, dismissed or resolved}"
            }
            return nil
        }
        if name.hasPrefix(SyncRecord.removalsPrefix) {
            let element = String(name.dropFirst(SyncRecord.removalsPrefix.count))
            guard SyncRecord.isElementField(element) else {
                return "field \(name.prefix(60)) is not removed:<photo:… or keyword:… field>"
            }
            if let problem = fieldProblem(kind, element, .null) { return problem }
            guard value == .bool(true) else { return "\(name.prefix(60)) must be true (it stands for the removals an add they had not seen beat)" }
            return nil
        }
        if name == SyncRecord.deletionsField {
            guard value == .bool(true) else { return "\(name) must be true (it stands for the deletes a version of the record they had not seen beat)" }
            return nil
        }
        if name == SyncRecord.conflictOfField {
            guard kind == .recipe, value == .null || isCanonicalUUID(value.object?["recipe"]?.string) else {
                return "\(name) must be null or {recipe: UUID in upper case}"
            }
            return nil
        }
        guard name == SyncRecord.deletedField || name == "createdAt" || knownFields[kind]!.contains(name) else {
            return "\(kind.rawValue) records have no field \(name.prefix(60)); they have \(knownFields[kind]!.sorted().joined(separator: ", ")), createdAt and \(SyncRecord.deletedField)"
                + (kind == .recipe ? ", photo:<id> and keyword:<text>" : ", conflict:<id>")
        }
        return nil
    }

    /// The plain fields of each kind of record (sets and conflicts come on top).
    static let knownFields: [SyncKind: Set<String>] = [
        // `photos` and `keywords` as whole lists come from replicas of an older version: accepted, and ignored (sets replaced them).
        .recipe: Set(["name", "ingredients", "instructions", "servings", "sourceType", "bookID", "sourcePageNumber", "isFavorite",
                      "rating", "origin", "photos", "keywords"] + RecipeTextField.names),
        .book: ["title", "author"],
        .ingredient: ["id", "category", "aliases"],
        .cookLog: ["recipeID", "recipeName", "cookedAt", "rating", "note", "servings"],
    ]

    /// Why `clock` is not a clock this replica accepts, or `nil`.
    static func clockProblem(_ clock: SyncClock, now: Int64) -> String? {
        guard let stamp = SyncStamp(clock.stamp) else {
            return "stamp \"\(clock.stamp.prefix(80))\" is not wall-milliseconds.counter.replica (up to 16 and 9 digits, a replica id of letters, digits and dashes)"
        }
        if stamp.wall > now + maxClockAheadMilliseconds {
            return "stamp \(clock.stamp.prefix(80)) is \((stamp.wall - now) / 60_000) minutes ahead of this replica's clock; at most \(maxClockAheadMilliseconds / 60_000) minutes are accepted (check the clock of the replica it came from: once it is set right, that replica stamps these again at its next write, start or sync; restored from an older backup that lacks them, it has ended, and this replica re-dates them once a sync says so)"
        }
        guard clock.vv.count <= maxVersionVectorEntries else {
            return "a version names \(clock.vv.count) replicas; at most \(maxVersionVectorEntries) are allowed"
        }
        for (replica, count) in clock.vv {
            guard isReplicaID(replica) else { return "version entry \"\(replica.prefix(80))\" is not a replica id" }
            guard count >= 0, count < Int64.max / 2 else { return "version entry \(replica) counts \(count) writes; that is not a write number" }
        }
        return nil
    }

    /// A UUID in the one spelling this replica writes (upper case, dashed): Foundation also reads
    /// looser forms, and a row written under one spelling and referred to under another breaks its links.
    static func isCanonicalUUID(_ text: String?) -> Bool {
        guard let text else { return false }
        return UUID(uuidString: text)?.uuidString == text
    }

    static func isReplicaID(_ text: String) -> Bool { SyncOps.Retire.isReplicaID(text) }

    /// Why `values` could not be written by a person (or `nil` when they could).
    static func valuesProblem(_ kind: SyncKind, id: String, _ values: [String: JSONValue]) -> String? {
        switch kind {
        case .recipe: return recipeProblem(id: id, values)
        case .book: return bookProblem(id: id, values)
        case .ingredient: return ingredientProblem(key: id, values)
        case .cookLog: return cookLogProblem(id: id, values)
        }
    }

    private static func recipeProblem(id: String, _ values: [String: JSONValue]) -> String? {
        guard isCanonicalUUID(id) else { return "the id is not a UUID in upper case" }
        switch values["bookID"] {
        case nil, .null?: break
        case .string(let book)? where isCanonicalUUID(book): break
        default: return "bookID must be a UUID in upper case, or null"
        }
        for field in ["ingredients", "instructions"] {
            for (index, line) in (values[field]?.array ?? []).enumerated() {
                if let lineID = line.object?["id"], !isCanonicalUUID(lineID.string) {
                    return "\(field)[\(index)].id must be a UUID in upper case"
                }
            }
        }
        var body = values
        // Concurrent adds on several replicas may together pass the per-recipe counts (each replica kept
        // to them): a merge keeps every element, and the counts bind the next person's add.
        if let keywords = body["keywords"]?.array, keywords.count > RecipeDraft.Limits.keywords {
            body["keywords"] = .array(Array(keywords.prefix(RecipeDraft.Limits.keywords)))
        }
        body.removeValue(forKey: "photos")
        body.removeValue(forKey: "createdAt")
        body.removeValue(forKey: SyncRecord.deletedField)
        let draft: RecipeDraft
        do {
            draft = try decoder.decode(RecipeDraft.self, from: encoder.encode(JSONValue.object(body)))
        } catch {
            return "the recipe's fields are not a recipe (\((error as? DecodingError)?.wireDescription ?? "unreadable"))"
        }
        let origin = draft.origin
        var checked = draft
        checked.origin = .custom // the origins only replicas set are checked below
        do {
            try checked.validate(total: false) // a merge may bring fields past it together
        } catch {
            return error.message
        }
        if origin == .starter && !SampleIdentity.isSample(.recipe, id: id, values: values) {
            return "origin starter belongs to the sample recipes only; a replica cannot make a recipe read-only"
        }
        if let problem = dateProblem(values["createdAt"], field: "createdAt") { return problem }
        guard let photos = values["photos"]?.array ?? (values["photos"] == nil ? [] : nil) else { return "photos is not a list" }
        guard photos.count <= maxFields else {
            return PhotoRules.tooMany(photos.count).message
        }
        let mediaTypes = Set(ImageKind.allCases.map(\.mediaType))
        for (index, item) in photos.enumerated() {
            guard let photo = item.object,
                  isCanonicalUUID(photo["id"]?.string),
                  let hash = photo["sha256"]?.string, RecipeStore.isHash(hash),
                  let bytes = photo["byteCount"]?.int, (1...RecipeVault.maxPhotoBytes).contains(bytes),
                  let mediaType = photo["mediaType"]?.string, mediaTypes.contains(mediaType) else {
                return "photos[\(index)] must be {id: UUID, sha256: 64 lowercase hex digits, byteCount: 1 to \(RecipeVault.maxPhotoBytes), mediaType: \(mediaTypes.sorted().joined(separator: ", "))}"
            }
        }
        return nil
    }

    private static func bookProblem(id: String, _ values: [String: JSONValue]) -> String? {
        guard isCanonicalUUID(id) else { return "the id is not a UUID in upper case" }
        guard let title = values["title"]?.string, !title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
              title.isWithin(characters: RecipeDraft.Limits.nameLength) else {
            return "title must be text of 1 to \(RecipeDraft.Limits.nameLength) characters (\(String.bytesPerCharacter) bytes of UTF-8 a character)"
        }
        if let problem = optionalText(values["author"], field: "author", limit: RecipeDraft.Limits.nameLength) { return problem }
        return dateProblem(values["createdAt"], field: "createdAt")
    }

    private static func ingredientProblem(key: String, _ values: [String: JSONValue]) -> String? {
        guard !key.isEmpty, key.isWithin(characters: CatalogueLimits.nameLength), IngredientParser.normalizeFood(key) == key else {
            return "the key must be a normalized ingredient name of 1 to \(CatalogueLimits.nameLength) characters (\(String.bytesPerCharacter) bytes of UTF-8 a character)"
        }
        guard isCanonicalUUID(values["id"]?.string) else { return "id is not a UUID in upper case" }
        switch values["category"] {
        case nil, .null?: break
        case .string(let category)? where IngredientCategory(rawValue: category) != nil: break
        default: return "category must be one of \(IngredientCategory.allCases.map(\.rawValue).joined(separator: ", ")) or null"
        }
        guard let list = values["aliases"]?.array ?? (values["aliases"] == nil ? [] : nil) else { return "aliases must be a list of names" }
        let aliases = list.compactMap(\.string)
        guard aliases.count == list.count else { return "aliases must be a list of names (text)" }
        if let problem = CatalogueLimits.aliasesProblem(aliases) { return problem }
        return dateProblem(values["createdAt"], field: "createdAt")
    }

    private static func cookLogProblem(id: String, _ values: [String: JSONValue]) -> String? {
        guard isCanonicalUUID(id) else { return "the id is not a UUID in upper case" }
        switch values["recipeID"] {
        case nil, .null?: break
        case .string(let recipe)? where isCanonicalUUID(recipe): break
        default: return "recipeID must be a UUID in upper case, or null"
        }
        guard let name = values["recipeName"]?.string, name.isWithin(characters: RecipeDraft.Limits.nameLength) else {
            return "recipeName must be text of at most \(RecipeDraft.Limits.nameLength) characters (\(String.bytesPerCharacter) bytes of UTF-8 a character)"
        }
        switch values["rating"] {
        case nil, .null?: break
        case let rating? where rating.int.map(ValueRanges.cookRating.contains) == true: break
        default: return "rating must be 1 to 5 or null"
        }
        switch values["servings"] {
        case nil, .null?: break
        case .number(let servings)?: if let problem = ValueRanges.servingsProblem(servings) { return problem }
        default: return "servings must be a number or null"
        }
        if let problem = optionalText(values["note"], field: "note", limit: RecipeDraft.Limits.textLength) { return problem }
        return dateProblem(values["cookedAt"], field: "cookedAt") ?? dateProblem(values["createdAt"], field: "createdAt")
    }

    private static func optionalText(_ value: JSONValue?, field: String, limit: Int) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.isWithin(characters: limit): return nil
        default: return "\(field) must be text of at most \(limit) characters (\(String.bytesPerCharacter) bytes of UTF-8 a character), or null"
        }
    }

    /// Dates travel as the database holds them: `2026-01-31 18:05:00.250`.
    private static func dateProblem(_ value: JSONValue?, field: String) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.utf8.count <= 32 && text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }): return nil
        default: return "\(field) must be a date as text (2026-01-31 18:05:00.250)"
        }
    }
}

/// The parts of a hybrid-logical-clock stamp, read strictly: `wall.counter.replica`.
struct SyncStamp {
    /// The most digits of each number part: 16 for the wall clock (milliseconds), 9 for the counter.
    static let wallDigits = 16
    static let counterDigits = 9

    var wall: Int64
    var counter: Int64

    init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3,
              (1...Self.wallDigits).contains(parts[0].utf8.count), parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
              (1...Self.counterDigits).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ (48...57).contains($0) }),
              SyncValidation.isReplicaID(String(parts[2])),
              let wall = Int64(parts[0]), let counter = Int64(parts[1]) else { return nil }
        self.wall = wall
        self.counter = counter
    }
}

/// The limits of catalogue entries, for people and replicas alike.
enum CatalogueLimits {
    static let nameLength = 100
    static let aliases = 50

    /// Why `aliases` are not what an entry may have (or `nil`): at most `aliases` names of 1 to `nameLength` characters.
    static func aliasesProblem(_ aliases: [String]) -> String? {
        if aliases.count > Self.aliases {
            return "the ingredient has \(aliases.count) aliases; the most allowed is \(Self.aliases)"
        }
        if aliases.contains(where: \.isEmpty) { return "an alias is empty; an alias is 1 to \(nameLength) characters" }
        if let long = aliases.first(where: { !$0.isWithin(characters: nameLength) }), let problem = long.sizeProblem("the alias \"\(long.prefix(40))…\"", characters: nameLength) {
            return problem
        }
        return nil
    }
}

extension SyncKind {
    /// What a person calls a record of this kind.
    var personName: String {
        switch self {
        case .book: "book"
        case .ingredient: "catalogue entry"
        case .recipe: "recipe"
        case .cookLog: "cook-log entry"
        }
    }
}
