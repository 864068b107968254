import RecipeProtocol

extension RecipeDraft {
    /// The draft with line ids and the book left out, for comparing a recipe with what came back from a round trip
    /// (an export read back, a migration, an edit in an editor): lines get new ids, and the book travels apart.
    public var withoutLineIDs: RecipeDraft {
        var copy = self
        copy.ingredients = copy.ingredients.map { .init(text: $0.text) }
        copy.instructions = copy.instructions.map { .init(text: $0.text, section: $0.section, title: $0.title) }
        copy.bookID = nil
        return copy
    }
}
