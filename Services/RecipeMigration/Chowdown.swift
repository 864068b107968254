import Foundation
import RecipeProtocol

/// A Chowdown recipe: a Markdown file (`_recipes/name.md`) whose YAML front matter holds
/// `title`, `image`, `tags`, `ingredients` and `directions` lists; the body below is the
/// story or notes. Recipes written by hand sometimes keep the lists in the body under
/// "Ingredients" and "Directions" headings instead: those are read too.
enum ChowdownRecipe {
    static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let file = entry.files.first(where: { [".md", ".markdown"].contains(where: $0.name.lowercased().hasSuffix) }) else {
            throw MigrationError("\(entry.label) has no Markdown file")
        }
        let text = RecipeSketch.decodeText(file.data)
        let (fields, body) = MiniYAML.frontMatter(text) ?? ([:], text)
        var sketch = RecipeSketch()
        let stem = PathText.deletingExtension(file.name)
        sketch["name"] = RecipeSketch.text(fields["title"]).flatMap { $0.isEmpty ? nil : $0 } ?? stem.replacingOccurrences(of: "-", with: " ").capitalized
        var ingredients = list(fields["ingredients"])
        var directions = list(fields["directions"])
        var story: [String] = []
        var heading = ""
        var pending: [String] = []
        func flushParagraph() {
            if !pending.isEmpty { story.append(pending.joined(separator: " ")) }
            pending = []
        }
        for rawLine in body.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") {
                flushParagraph()
                heading = line.trimmingCharacters(in: CharacterSet(charactersIn: "# ")).lowercased()
                continue
            }
            let item = listItem(line)
            if let item, heading.contains("ingredient"), fields["ingredients"] == nil {
                ingredients.append(item)
            } else if let item, heading.contains("direction") || heading.contains("instruction") || heading.contains("method") || heading.contains("step"),
                      fields["directions"] == nil {
                directions.append(item)
            } else if line.isEmpty {
                flushParagraph()
            } else {
                pending.append(line)
            }
        }
        flushParagraph()
        sketch["recipeIngredient"] = ingredients
        sketch["recipeInstructions"] = directions
        sketch["keywords"] = list(fields["tags"])
        sketch["recipeYield"] = RecipeSketch.text(fields["yield"] ?? fields["servings"])
        sketch["prepTime"] = RecipeSketch.text(fields["prep"] ?? fields["prep_time"] ?? fields["preptime"])
        sketch["cookTime"] = RecipeSketch.text(fields["cook"] ?? fields["cook_time"] ?? fields["cooktime"])
        sketch["totalTime"] = RecipeSketch.text(fields["time"] ?? fields["total_time"])
        sketch["author"] = RecipeSketch.text(fields["author"])
        if let source = RecipeSketch.text(fields["source"] ?? fields["url"]), source.hasPrefix("http") { sketch.sourceURL = source }
        if let first = story.first, first.count <= 500 { sketch["description"] = first; story.removeFirst() }
        sketch.notes += story
        sketch.keep("Made with", list(fields["components"]))
        sketch.keep("Photo credit", fields["imagecredit"])
        sketch.createdAt = RecipeSketch.date(fields["date"])
        let images = entry.files.filter { $0.data.looksLikeImage }
        let named = RecipeSketch.text(fields["image"]).map(PathText.lastComponent)
        if let photo = images.first(where: { $0.name == named }) ?? images.first { sketch.photos.append(.init(name: photo.name, data: photo.data)) }
        return try sketch.recipe(sourceID: "chowdown:\(entry.label)", label: entry.label)
    }

    /// A front-matter list, or a text of one item per line.
    static func list(_ value: Any?) -> [String] {
        switch value {
        case let items as [Any]: return items.compactMap { RecipeSketch.text($0) }.filter { !$0.isEmpty }
        case let text as String: return RecipeSketch.lines(text).map { listItem($0) ?? $0 }
        default: return []
        }
    }

    /// "- 2 eggs", "* 2 eggs", "1. Beat": the item's text.
    static func listItem(_ line: String) -> String? {
        if line.hasPrefix("- ") || line.hasPrefix("* ") || line.hasPrefix("+ ") { return String(line.dropFirst(2)).trimmingCharacters(in: .whitespaces) }
        let digits = line.prefix { $0.isNumber }
        if !digits.isEmpty, line.dropFirst(digits.count).hasPrefix(". ") || line.dropFirst(digits.count).hasPrefix(") ") {
            return String(line.dropFirst(digits.count + 2)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
