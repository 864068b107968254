import Foundation

/// Reads a recipe from a page that carries no schema.org recipe: the title, the list under an
/// "Ingredients" heading and the steps under a "Method" heading, in English, German, French,
/// Spanish, Italian, Dutch, Portuguese, the Scandinavian languages, Polish and Hungarian.
///
/// The page is read once into blocks of text (headings, list items, paragraphs), skipping what is
/// never text (scripts, styles, inline images, frames). A recipe is found only when an
/// ingredients heading is followed by at least two ingredient lines and a method heading by at least
/// one step, so an article that merely mentions ingredients gives nothing.
enum HeadingReader {
    /// The most blocks read from one page, and the longest text kept for one block.
    static let maxBlocks = 20_000
    static let maxBlockText = 4_000
    static let maxCandidates = 20
    static let maxSpan = 600

    enum Kind: Equatable { case heading, item, paragraph }

    struct Block: Equatable {
        var kind: Kind
        var text: String
        /// 1 to 6 for a heading (`h1`…`h6`), 0 otherwise.
        var level = 0
        /// Which list item a block of kind item is in (blocks of one item are joined into one).
        var item = 0
    }

    /// What a page without structured data gives: a recipe object in the shape JSON-LD gives, for `normalize`.
    static func recipe(in html: String, meta: PageMeta? = nil, blocks: [Block]? = nil) -> [String: Any]? {
        let meta = meta ?? HTMLText.metas(in: html)
        let blocks = blocks ?? self.blocks(in: html)
        guard let (ingredients, steps) = ingredientsAndSteps(blocks) else { return nil }
        // The page's main heading is the recipe's name; else its sharing title without the site's name.
        let title = blocks.first { $0.level == 1 && $0.text.count > 2 && $0.text.count <= 200 }?.text
            ?? meta["og:title"].map(withoutSiteName)
            ?? blocks.first { $0.kind == .heading && $0.text.count > 2 }?.text
        guard let title, !title.isEmpty else { return nil }
        var recipe: [String: Any] = ["@type": "Recipe", "name": title, "recipeIngredient": ingredients, "recipeInstructions": steps]
        if let description = meta["og:description"] ?? meta["description"] {
            recipe["description"] = description
        }
        if let image = meta["og:image"] { recipe["image"] = image }
        if let byline = byline(blocks) { recipe["author"] = byline }
        if let yield = yieldText(blocks) { recipe["recipeYield"] = yield }
        for (field, text) in timeTexts(blocks) { recipe[field] = text }
        return recipe
    }

    /// The yield the page shows as text ("Serves: 4 | Total Time: 35 minutes", "Makes 4 to 6 servings", "Yield:" over
    /// "20 to 22", "4 portioner"): the part that says how many, for YieldText to read. Only short lines are read.
    static func yieldText(_ blocks: [Block]) -> String? {
        for (index, block) in blocks.enumerated() where block.text.utf8.count <= 240 && block.text.count <= 60 {
            // Only a line opening with a number or with a label's first letter can say it.
            guard let opening = block.text.first, opening.isNumber || yieldLabelOpenings.contains(opening.lowercased()) else { continue }
            let text = block.text.utf8.contains(UInt8(ascii: "|")) ? trimmed(block.text.split(separator: "|").first ?? "") : block.text
            let words = text.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard let first = words.first else { continue }
            // A label, then the count (on this line, or alone on the next).
            let twoWords = words.count > 1 && yieldLabels.contains("\(first) \(words[1])".lowercased())
            if twoWords || yieldLabels.contains(first.lowercased()) {
                let labelWords = twoWords ? 2 : 1
                let rest = words.dropFirst(labelWords).joined(separator: " ")
                // A serving size is a yield only as a bare count ("Serving Size: 4-6"), not an amount ("1 cup").
                if labelWords == 2, !rest.allSatisfy({ $0.isNumber || " -–".contains($0) }) { continue }
                if rest.first?.isNumber == true { return rest }
                if rest.isEmpty, index + 1 < blocks.count, blocks[index + 1].text.count <= 30, blocks[index + 1].text.first?.isNumber == true {
                    return blocks[index + 1].text
                }
                continue
            }
            // The count, then what it counts in people or portions ("3-4 Servings", "4 porce").
            guard first.first?.isNumber == true, words.count <= 4,
                  let noun = words.dropFirst().first(where: { !$0.allSatisfy { $0.isNumber || "-–".contains($0) } && !["to", "bis", "à", "a", "a"].contains($0.lowercased()) }),
                  portionWords.contains(noun.lowercased()) else { continue }
            return text
        }
        return nil
    }

    private static let yieldLabelOpenings = Set(yieldLabels.compactMap { $0.first.map(String.init) })

    /// `text` without spaces at either end.
    static func trimmed<Text: StringProtocol>(_ text: Text) -> String {
        func isSpace(_ character: Character) -> Bool { character == " " || character == "\u{a0}" }
        guard let first = text.first, let last = text.last, isSpace(first) || isSpace(last) else { return String(text) }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }

    private static let yieldLabels: Set<String> = [
        "serves", "servings", "serving", "makes", "yield", "yields", "portions", "portionen", "personen", "für", "porciones", "raciones",
        "rinde", "porzioni", "dosi", "personnes", "portioner", "porce", "porcje", "adag", "rendement", "opbrengst", "serving size",
        "servings per recipe",
    ]
    private static let portionWords: Set<String> = [
        "servings", "serving", "serves", "portions", "portion", "people", "persons", "portionen", "personen", "porciones", "personas",
        "raciones", "porzioni", "persone", "personnes", "parts", "portioner", "personer", "porce", "porcje", "porcji", "osób", "adag",
        "personen", "porties",
    ]

    /// The times the page shows as text ("Prep Time: 5 minutes", "Cuisson 1h10", "Tempo de preparo" over "30" and
    /// "minutos", "30 min Preparation Time"), by schema.org field (`totalTime`, `prepTime`, `cookTime`), as written:
    /// only a label opening a short line (or a part of one between "|"), then a duration.
    static func timeTexts(_ blocks: [Block]) -> [String: String] {
        var found: [String: String] = [:]
        for (index, block) in blocks.enumerated() where block.text.utf8.count <= 320 && block.text.count <= 80 && found.count < 3 {
            // A label opens the line, or a number does ("30 min Preparation Time").
            let segmented = block.text.utf8.contains(UInt8(ascii: "|"))
            guard let opening = block.text.first, segmented || opening.isNumber || timeLabelsByFirstWord[firstWord(of: block.text)] != nil else { continue }
            for segment in segmented ? block.text.split(separator: "|") : [Substring(block.text)] {
                let part = trimmed(segment)
                guard let first = part.first else { continue }
                let labels = first.isNumber ? timeLabelsAll : (timeLabelsByFirstWord[firstWord(of: part)] ?? [])
                guard !labels.isEmpty else { continue }
                let lowered = part.lowercased()
                for (field, label) in labels where found[field] == nil {
                    var value: String?
                    if lowered.hasPrefix(label) {
                        let rest = part.dropFirst(label.count).drop { $0 == ":" || $0 == " " || $0 == "\u{a0}" }
                        if rest.isEmpty {
                            // The value on its own line, maybe with its unit on the next ("30" / "minutos").
                            let next = blocks[(index + 1)...].prefix(2).map(\.text)
                            if let first = next.first, first.count <= 20, first.first?.isNumber == true {
                                value = first.allSatisfy(\.isNumber) && next.count > 1 && next[1].count <= 12 ? first + " " + next[1] : first
                            }
                        } else if rest.first?.isNumber == true, rest.count <= 30 {
                            value = String(rest)
                        }
                    } else if first.isNumber, lowered.hasSuffix(" " + label), part.count <= label.count + 20 {
                        value = trimmed(part.dropLast(label.count))
                    }
                    if let value, RecipeExtractor.spokenMinutes(value) != nil {
                        found[field] = value
                    }
                }
            }
        }
        return found
    }

    /// Every time label with its field, longest first within each field; and by the label's first word.
    private static let timeLabelsAll: [(field: String, label: String)] = timeLabels.flatMap { field, labels in labels.map { (field, $0) } }
    private static let timeLabelsByFirstWord: [String: [(field: String, label: String)]] =
        Dictionary(grouping: timeLabelsAll, by: { firstWord(of: $0.label) })

    /// Labels of times, longest first within each field.
    private static let timeLabels: [(String, [String])] = [
        ("totalTime", ["total time", "temps total", "tiempo total", "tempo totale", "tempo total", "totale tijd", "gesamtzeit", "totaltid", "ready in", "total"]),
        ("prepTime", ["preparation time", "prep time", "temps de préparation", "tiempo de preparación", "tempo di preparazione", "tempo de preparo",
                      "zubereitungszeit", "vorbereitungszeit", "arbeitszeit", "bereidingstijd", "voorbereidingstijd", "préparation", "preparación",
                      "preparazione", "active time", "preparation", "prep"]),
        ("cookTime", ["cooking time", "cook time", "temps de cuisson", "tiempo de cocción", "tempo di cottura", "tempo de cocção", "tempo de cozimento",
                      "kochzeit", "backzeit", "garzeit", "kooktijd", "baktijd", "tillagningstid", "cooking", "cuisson", "cocción", "cottura"]),
    ]

    /// The name in a byline near the top of the page ("By Rose Hattabaugh April 4, 2023", "Von Anna Weber"): the capitalised
    /// words after the word for "by", up to the first that is not one.
    static func byline(_ blocks: [Block]) -> String? {
        for block in blocks.prefix(400) where block.kind != .item && block.text.count <= 120 {
            let words = block.text.split(separator: " ")
            guard words.count >= 3, bylineWords.contains(words[0].lowercased()) else { continue }
            let name = words.dropFirst().prefix { word in
                word.first.map { $0.isUppercase } == true && word.count <= 30 && !word.contains(where: \.isNumber) && !months.contains(word.lowercased())
            }.prefix(4)
            guard name.count >= 2 else { continue }
            return name.joined(separator: " ").trimmingCharacters(in: CharacterSet(charactersIn: ",;|·"))
        }
        return nil
    }

    private static let bylineWords: Set<String> = ["by", "von", "par", "por", "di", "door", "av", "af", "przez"]
    private static let months: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    ]

    /// The first ingredients heading followed by ingredient lines and then the steps: under a method heading; else
    /// under numbered headings ("Step 1", "1. Preheat the oven"); else under a heading after the ingredients whose lines
    /// read like steps (sentences); else, with no heading at all, the run of sentences right after the ingredient list.
    /// Bounded: at most `maxCandidates` ingredients headings are tried, each looking `maxSpan` blocks ahead.
    static func ingredientsAndSteps(_ blocks: [Block]) -> (ingredients: [String], steps: [Any])? {
        let methods = blocks.indices.filter { isHeading(blocks[$0], methodWords) }
        var tried = 0
        for start in blocks.indices where isHeading(blocks[start], ingredientWords, numbersAllowed: true) {
            tried += 1
            guard tried <= maxCandidates else { break }
            let span = (start + 1)..<min(blocks.count, start + 1 + maxSpan)
            // Where the ingredients end, and where the steps begin (after the method heading, or at the first numbered one).
            var bounds: (end: Int, steps: Int)?
            var stepsEnd: Int?
            if let method = methods.first(where: { span.contains($0) }) {
                bounds = (method, method + 1)
            } else if let first = span.first(where: { index in
                index > start + 2 && blocks[index].kind == .heading && headingNumber(blocks[index].text)?.number == 1
                    && numberedSteps(blocks[index...].prefix(200)) != nil
            }) {
                bounds = (first, first)
            } else if let heading = span.first(where: { index in
                blocks[index].kind == .heading && index > start + 2 && looksLikeSteps(flattened(stepRun(blocks[(index + 1)...].prefix(30))))
            }) {
                bounds = (heading, heading + 1)
            } else if let run = unheadedSteps(blocks, after: start, in: span) {
                bounds = (run.lowerBound, run.lowerBound)
                stepsEnd = run.upperBound
            }
            guard let (end, stepsStart) = bounds else { continue }
            // Another ingredients heading before the steps with no ingredient lines before it (this one was a menu's
            // "Ingredients" link): that one is tried next. One after some lines is a group's ("Equipment needed").
            if let next = blocks[(start + 1)..<end].firstIndex(where: { isHeading($0, ingredientWords, numbersAllowed: true) }),
               lines(blocks[(start + 1)..<next]).count < 2 {
                continue
            }
            let ingredients = lines(blocks[(start + 1)..<end])
            guard ingredients.count >= 2, ingredients.count <= 150 else { continue }
            let stop = stepsEnd ?? blocks[stepsStart...].dropFirst().firstIndex { isHeading($0, endWords) } ?? blocks.endIndex
            let part = blocks[stepsStart..<max(stepsStart, stop)]
            let steps: [Any] = numberedSteps(part)
                ?? stepRun(part)
            guard !steps.isEmpty else { continue }
            return (ingredients, steps)
        }
        return nil
    }

    /// Steps with no heading over them: the ingredient list under `start` (items, and short lines naming its groups) is
    /// followed straight away by sentences. Those paragraphs, when at least two read like steps.
    static func unheadedSteps(_ blocks: [Block], after start: Int, in span: Range<Int>) -> Range<Int>? {
        guard let firstItem = blocks[span].firstIndex(where: { $0.kind == .item }), firstItem <= start + 3 else { return nil }
        var index = firstItem
        while index < span.upperBound, blocks[index].kind == .item || (blocks[index].kind == .paragraph && blocks[index].text.count < 30) {
            index += 1
        }
        guard index < span.upperBound, blocks[index].kind == .paragraph else { return nil }
        let run = blocks[index..<span.upperBound].prefix { $0.kind == .paragraph }.prefix(100)
        return looksLikeSteps(run.prefix(30).map(\.text)) ? run.startIndex..<run.endIndex : nil
    }

    /// Steps written as numbered headings, each over its text ("Step 1" / "1. Preheat the oven" then a paragraph):
    /// a step per heading, the heading its title unless it is only the number. Nil when the part does not open so.
    static func numberedSteps(_ part: ArraySlice<Block>) -> [Any]? {
        var steps: [Any] = []
        var title: String?
        var text: [String] = []
        func finish() {
            guard let heading = title else { return }
            // The heading without its number: a title, unless nothing (or only a label like "Step 2") is left.
            let bare = headingNumber(heading)?.title ?? heading
            let isTitle = !bare.isEmpty && !RecipeExtractor.isNumbering(heading.count == bare.count ? heading : bare)
            if text.isEmpty {
                if isTitle { steps.append(bare) }
            } else {
                var step: [String: Any] = ["@type": "HowToStep", "text": text.joined(separator: " ")]
                if isTitle { step["name"] = bare }
                steps.append(step)
            }
            title = nil
            text = []
        }
        var number = 0
        for block in part {
            if block.kind == .heading {
                // Numbered 1, 2, 3… in order; any other heading ends the steps.
                guard headingNumber(block.text)?.number == number + 1 else { break }
                finish()
                number += 1
                title = block.text
            } else if title != nil {
                text.append(block.text)
            } else if !steps.isEmpty {
                break
            } else {
                return nil // text before the first numbered heading: not this layout
            }
            if number >= 100 { break }
        }
        finish()
        return number >= 2 && !steps.isEmpty ? steps : nil
    }

    /// A heading's step number and what follows it: "1. Preheat your oven" → (1, "Preheat your oven"), "Step 2" → (2, "");
    /// nil when the heading does not open with a step number.
    static func headingNumber(_ heading: String) -> (number: Int, title: String)? {
        var rest = Substring(heading)
        if let word = rest.split(separator: " ", maxSplits: 1).first, RecipeExtractor.stepWords.contains(word.lowercased()) {
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 3, let number = Int(digits) else { return nil }
        rest = rest.dropFirst(digits.count)
        let separators: Set<Character> = [".", ")", ":", " ", "-", "–"]
        guard rest.first.map(separators.contains) ?? true else { return nil }
        return (number, String(rest.drop(while: separators.contains)))
    }

    /// "Mango Guacamole - Rick Bayless" → "Mango Guacamole": a page title's first part, before the site's name.
    static func withoutSiteName(_ title: String) -> String {
        for separator in [" | ", " │ ", " - ", " – ", " — ", " :: ", " · "] {
            if let range = title.range(of: separator), !title[..<range.lowerBound].isEmpty {
                return String(title[..<range.lowerBound])
            }
        }
        return title
    }

    /// Lines that read like steps: most of them sentences, not short names.
    static func looksLikeSteps(_ lines: [String]) -> Bool {
        guard lines.count >= 2 else { return false }
        return lines.filter { $0.count >= 30 && $0.contains(" ") }.count * 3 >= lines.count * 2
    }

    /// The steps at the start of a part of the page: after any headings, the first run of lines of one kind (list items,
    /// or paragraphs), at most 100. Between runs of items, a short line ending in a colon ("Rice Method:") names a section
    /// (a HowToSection of the steps after it). Steps numbered 1, 2, 3… end where the numbering does, without their numbers.
    static func stepRun(_ part: ArraySlice<Block>) -> [Any] {
        func isLabel(_ block: Block) -> Bool { block.kind == .paragraph && block.text.count <= 40 && block.text.hasSuffix(":") }
        var index = part.startIndex
        while index < part.endIndex, part[index].kind == .heading { index += 1 }
        var sections: [(name: String?, steps: [String])] = [(nil, [])]
        var kind: Kind?
        var count = 0
        while index < part.endIndex, count < 100 {
            let block = part[index]
            if block.kind == .heading { break }
            if isLabel(block) {
                // A section's name when items follow it (the steps so far being items, or none yet).
                guard kind != .paragraph, index + 1 < part.endIndex, part[index + 1].kind == .item else { break }
                if sections[sections.count - 1].steps.isEmpty { sections[sections.count - 1].name = String(block.text.dropLast()).trimmingCharacters(in: .whitespaces) }
                else { sections.append((String(block.text.dropLast()).trimmingCharacters(in: .whitespaces), [])) }
                index += 1
                continue
            }
            if let kind, block.kind != kind { break }
            kind = block.kind
            sections[sections.count - 1].steps.append(block.text)
            count += 1
            index += 1
        }
        var steps: [Any] = []
        for section in sections where !section.steps.isEmpty {
            if let name = section.name {
                steps.append(["@type": "HowToSection", "name": name, "itemListElement": numberedRun(section.steps)] as [String: Any])
            } else {
                steps.append(contentsOf: numberedRun(section.steps) as [Any])
            }
        }
        return steps
    }

    /// Steps numbered "1.", "2)", "3-" at their start: up to where the numbering stops (a line without the next number
    /// that is not followed by it within two lines ends them; one that is belongs to the step before), numbers removed.
    /// Lines not numbered from 1 are kept as they are.
    static func numberedRun(_ lines: [String]) -> [String] {
        func rest(_ line: String, _ number: Int) -> String? {
            let marker = "\(number)"
            for separator in [". ", ") ", "- ", ".", ")"] where line.hasPrefix(marker + separator) {
                let text = line.dropFirst(marker.count + separator.count).drop { $0 == " " }
                // "1.5 kg" is an amount, not a number 1.
                guard let first = text.first, !first.isNumber else { return nil }
                return String(text)
            }
            return nil
        }
        guard lines.count >= 2, rest(lines[0], 1) != nil else { return lines }
        var steps: [String] = []
        var index = 0
        while index < lines.count {
            if let text = rest(lines[index], steps.count + 1) {
                steps.append(text)
                index += 1
            } else if let next = (index + 1..<min(lines.count, index + 3)).first(where: { rest(lines[$0], steps.count + 1) != nil }) {
                steps[steps.count - 1] += " " + lines[index..<next].joined(separator: " ")
                index = next
            } else {
                break
            }
        }
        return steps
    }

    /// The lines of the steps, sections flattened.
    static func flattened(_ steps: [Any]) -> [String] {
        steps.flatMap { step -> [String] in
            if let text = step as? String { return [text] }
            return ((step as? [String: Any])?["itemListElement"] as? [String]) ?? []
        }
    }

    /// The ingredient lines of a part of the page: its list items when it has two or more, else its paragraphs (a heading
    /// or a "For the sauce:" line in between is a group's name, left out).
    static func lines(_ part: ArraySlice<Block>) -> [String] {
        let items = part.filter { $0.kind == .item }.map(\.text)
        if items.count >= 2 { return items }
        return part.filter { $0.kind == .paragraph && !$0.text.hasSuffix(":") }.map(\.text)
    }

    static let ingredientWords = Vocabulary([
        "ingredients", "ingredient", "you will need", "you'll need", "what you need", "zutaten", "ingrédients", "ingredientes",
        "ingredienti", "ingrediënten", "ingredienten", "benodigdheden", "ingredienser", "ingredienserne", "ainekset", "składniki",
        "hozzávalók", "suroviny", "sastojci", "malzemeler", "ingrediente", "材料", "食材",
    ])
    static let methodWords = Vocabulary([
        "instructions", "instruction", "directions", "method", "methods", "preparation", "steps", "how to make it", "how to make",
        "step-by-step", "step by step", "what to do",
        "zubereitung", "anleitung", "zubereitungsschritte", "so geht's", "préparation", "instructions de préparation", "étapes",
        "preparación", "elaboración", "instrucciones", "pasos", "procedimiento", "preparazione", "procedimento", "istruzioni",
        "bereiding", "bereidingswijze", "werkwijze", "instructies", "gör så här", "tillagning", "instruktioner", "fremgangsmåde",
        "fremgangsmåte", "valmistus", "przygotowanie", "sposób przygotowania", "elkészítés", "elkészítése", "modo de preparo",
        "modo de preparação", "postup", "做法", "步骤",
    ])
    static let endWords = Vocabulary([
        "notes", "note", "tips", "nutrition", "comments", "reviews", "related recipes", "you may also like", "more recipes",
        "notizen", "tipps", "nährwerte", "astuces", "remarques", "notas", "consejos", "note dello chef", "consigli", "tips en trucs",
        "opmerkingen", "tips och trix", "leave a comment", "share this recipe",
    ])

    /// A short block that names one of `words`: "Ingredients", "INGREDIENTS:", a heading "Zutaten für 4 Personen" or
    /// "Cooking Instructions", a paragraph "Here's how to make it:".
    static func isHeading(_ block: Block, _ words: Vocabulary, numbersAllowed: Bool = false) -> Bool {
        guard block.text.utf8.count <= 240, block.kind != .item || block.text.count <= 20, block.text.count <= 60 else { return false }
        // Other than a heading or a line ending in a colon, a block is one only when it opens with a phrase's first word
        // (every phrase is shorter than 45 characters).
        if block.kind != .heading, block.text.last != ":" {
            guard block.text.utf8.count <= 180, words.firstWords.contains(firstWord(of: block.text)) else { return false }
        }
        var lowered = block.text.lowercased()
        if lowered.utf8.contains(0xE2) { lowered = lowered.replacingOccurrences(of: "’", with: "'") }
        let text = String(lowered.drop { headingPunctuation.contains($0) }.reversed().drop { headingPunctuation.contains($0) }.reversed())
        if words.phrases.contains(text) { return true }
        let tokens = text.split(whereSeparator: { !($0.isLetter || $0 == "'" || $0 == "’" || $0 == "-") })
            .flatMap { $0.split(separator: "-", omittingEmptySubsequences: false) }.map(String.init)
        // Ingredients headings often say for how many: "Zutaten für 4 Personen", "Ingredients (serves 4)".
        if numbersAllowed, block.kind != .item, block.text.count <= 40 {
            for count in stride(from: 1, through: min(words.longest, tokens.count), by: 1)
            where words.phrases.contains(tokens[..<count].joined(separator: " ")) {
                let phrase = tokens[..<count].joined(separator: " ")
                if text.hasPrefix(phrase + " ") || text.hasPrefix(phrase + ":") || text.hasPrefix(phrase + " (") { return true }
            }
        }
        // Within a longer heading (or a short line ending in a colon), as whole words; never a line with a number in it
        // ("Preparation time: 10 min", "6 ingredients") — a label or a title, not the heading over the recipe.
        guard block.kind == .heading || (block.text.hasSuffix(":") && block.text.count <= 40), !text.contains(where: \.isNumber)
        else { return false }
        for start in tokens.indices {
            for count in stride(from: 1, through: min(words.longest, tokens.count - start), by: 1)
            where words.phrases.contains(tokens[start..<(start + count)].joined(separator: " ")) {
                return true
            }
        }
        return words.ideographic.contains { text.firstRange(of: $0) != nil }
    }

    private static let headingPunctuation: Set<Character> = [" ", ":", "：", ".", "-", "–", "—", "#", "*", "!"]

    /// The first word of a text, lower-cased, after any heading punctuation: "INGREDIENTS:" → "ingredients", "What You’ll" → "what".
    static func firstWord<Text: StringProtocol>(of text: Text) -> String {
        let word = text.drop { headingPunctuation.contains($0) }.prefix { $0.isLetter || $0 == "'" || $0 == "’" }.prefix(24).lowercased()
        return word.utf8.contains(0xE2) ? word.replacingOccurrences(of: "’", with: "'") : word
    }

    /// Heading words: phrases of one to `longest` words (as "step by step"), and ideographic ones matched anywhere.
    struct Vocabulary: Sendable {
        let phrases: Set<String>
        let longest: Int
        let ideographic: [String]
        /// The first word of each phrase ("step" of "step by step").
        let firstWords: Set<String>
        init(_ words: [String]) {
            let normalized = words.map { $0.replacingOccurrences(of: "-", with: " ") }
            phrases = Set(normalized)
            firstWords = Set(normalized.compactMap { $0.split(separator: " ").first.map { HeadingReader.firstWord(of: $0) } })
            longest = normalized.map { $0.split(separator: " ").count }.max() ?? 1
            ideographic = words.filter { $0.unicodeScalars.contains { $0.value >= 0x3000 } }
        }
    }

    // MARK: Blocks

    /// Elements whose content is never page text. (Navigation, forms and footers are read: pages wrap whole
    /// articles in them, and the heading search passes over menus on its own.)
    private static let skipped: Set<String> = ["script", "style", "noscript", "svg", "template", "iframe", "select", "textarea", "object"]
    private static let breaking: Set<String> = [
        "p", "div", "li", "ul", "ol", "br", "section", "article", "table", "tr", "td", "th", "dt", "dd", "header", "main",
        "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "figure", "figcaption", "hr", "nav", "footer", "aside", "form",
    ]

    /// The tag names the reader acts on, as packed keys.
    private enum Keys {
        static func key(_ name: String) -> Microdata.TagKey { Microdata.key(Array(name.utf8)) }
        static let skipped = Set(HeadingReader.skipped.map(key))
        static let breaking = Set(HeadingReader.breaking.map(key))
        static let inline = Set(HTMLText.inlineTags.map(key))
        static let headings = Dictionary(uniqueKeysWithValues: (1...6).map { (key("h\($0)"), $0) })
        static let endHeading = Set(["ul", "ol", "li", "p", "table", "dl"].map(key))
        static let lists = Set(["ul", "ol", "dl"].map(key))
        static let li = key("li"), dd = key("dd")
        /// Elements whose content is raw text, with the start of their end tag.
        static let rawTextEnds: [Microdata.TagKey: StaticString] = [
            key("script"): "</script", key("style"): "</style", key("textarea"): "</textarea", key("noscript"): "</noscript",
            key("iframe"): "</iframe",
        ]
    }

    /// The page's text as blocks, in order.
    static func blocks(in html: String) -> [Block] {
        var html = html
        return html.withUTF8 { page in
            var reader = BlockReader(page: page)
            reader.read()
            return reader.blocks
        }
    }

    private struct BlockReader {
        let page: UnsafeBufferPointer<UInt8>
        var blocks: [Block] = []
        var text: [UInt8] = []
        /// Open headings and list items (a block's kind), and how deep inside skipped elements the reader is.
        var headingDepth = 0
        var headingLevel = 0
        var itemDepth = 0
        var skipDepth = 0
        var skippedName: Microdata.TagKey?
        /// The list items open, innermost last, each by its number on the page.
        var openItems: [Int] = []
        var itemCount = 0

        init(page: UnsafeBufferPointer<UInt8>) { self.page = page }

        mutating func read() {
            var index = 0
            while index < page.count, blocks.count < HeadingReader.maxBlocks {
                let byte = page[index]
                guard byte == UInt8(ascii: "<") else {
                    if skipDepth == 0, text.count < HeadingReader.maxBlockText { text.append(byte) }
                    index += 1
                    continue
                }
                // A comment is passed over whole.
                if index + 3 < page.count, page[index + 1] == UInt8(ascii: "!"), page[index + 2] == UInt8(ascii: "-"), page[index + 3] == UInt8(ascii: "-") {
                    index = (ByteScan.find("-->", in: page, from: index + 4) ?? page.count - 3) + 3
                    continue
                }
                guard let close = ByteScan.find(byte: UInt8(ascii: ">"), in: page, from: index + 1) else { break }
                tag(UnsafeBufferPointer(rebasing: page[(index + 1)..<close]))
                index = close + 1
                // Raw text (a script's `a<b` is no tag): straight to the element's end tag, or the page's end when it has none.
                if skipDepth > 0, let name = skippedName, let end = Keys.rawTextEnds[name] {
                    index = ByteScan.find(end, in: page, from: index) ?? page.count
                }
            }
            flush()
        }

        mutating func tag(_ bytes: UnsafeBufferPointer<UInt8>) {
            var start = 0
            let closing = bytes.first == UInt8(ascii: "/")
            if closing { start = 1 }
            var end = start
            while end < bytes.count, isNameByte(bytes[end]) { end += 1 }
            guard end > start else { return }
            // Tag names compared as packed numbers: no string is made per tag.
            let name = Microdata.key(UnsafeBufferPointer(rebasing: bytes[start..<end]))
            if skipDepth > 0 {
                // Inside a skipped element only its own end matters (nested ones of the same name counted).
                if name == skippedName { skipDepth += closing ? -1 : (bytes.last == UInt8(ascii: "/") ? 0 : 1) }
                if skipDepth == 0 { skippedName = nil }
                return
            }
            if !closing, Keys.skipped.contains(name), bytes.last != UInt8(ascii: "/") {
                flush()
                skipDepth = 1
                skippedName = name
                return
            }
            guard Keys.breaking.contains(name) else {
                // An inline tag (a link, bold text) joins its text to what is around it, as a browser shows it; an element
                // starting right where an inline one closed is a separate piece.
                let inline = Keys.inline.contains(name)
                if !inline || (!closing && text.last == 0) { text.append(UInt8(ascii: " ")) }
                if inline && closing { text.append(0) }
                return
            }
            flush()
            if let level = Keys.headings[name] {
                // Headings do not nest: a new one ends any left open.
                headingDepth = closing ? max(0, headingDepth - 1) : 1
                headingLevel = headingDepth > 0 ? level : 0
            } else if !closing, Keys.endHeading.contains(name) {
                headingDepth = 0 // a list or paragraph is never part of a heading left open
            }
            if name == Keys.li || name == Keys.dd {
                itemDepth = max(0, itemDepth + (closing ? -1 : 1))
                if closing {
                    _ = openItems.popLast()
                } else {
                    itemCount += 1
                    if openItems.count < 64 { openItems.append(itemCount) } else { openItems[openItems.count - 1] = itemCount }
                }
            }
            // Items may be left unclosed: the end of their list ends them.
            if closing, Keys.lists.contains(name) {
                itemDepth = 0
                openItems.removeAll(keepingCapacity: true)
            }
        }

        func isNameByte(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
        }

        mutating func flush() {
            defer { text.removeAll(keepingCapacity: true) }
            guard text.contains(where: { $0 > 0x20 }) else { return }
            // (A zero byte marks where an inline element closed; it is not text.)
            let cleaned = HTMLText.collapse(HTMLText.decodeEntities(String(decoding: text.lazy.filter { $0 != 0 }, as: UTF8.self)))
            guard !cleaned.isEmpty else { return }
            let kind: Kind = headingDepth > 0 ? .heading : itemDepth > 0 ? .item : .paragraph
            let item = kind == .item ? openItems.last ?? 0 : 0
            // A list item is one line, however its parts are laid out ("<li><div>1</div><div>cup flour</div></li>").
            if kind == .item, item > 0, let last = blocks.last, last.kind == .item, last.item == item, last.text.count < HeadingReader.maxBlockText {
                blocks[blocks.count - 1].text += " " + cleaned
                return
            }
            blocks.append(Block(kind: kind, text: cleaned, level: kind == .heading ? headingLevel : 0, item: item))
        }
    }
}
