/// Where a recipe came from, as the user entered it.
public enum SourceType: String, Codable, Sendable, CaseIterable, WireChoice {
    case book, url, manual
}

/// How a recipe came to be in this collection.
public enum RecipeOrigin: String, Codable, Sendable, CaseIterable, WireChoice {
    /// A read-only sample recipe; duplicate it to change it.
    case starter
    /// Entered or edited by the user.
    case custom
    /// Imported from a web page.
    case imported
    /// The losing side of a sync conflict, kept so no edit is lost.
    case conflictedCopy
}

/// What kind of food a catalogue entry is.
public enum IngredientCategory: String, Codable, Sendable, CaseIterable, WireChoice {
    case protein, vegetable, fruit, dairy, grain, pantryStaple, herb, spice, condiment, other
}
