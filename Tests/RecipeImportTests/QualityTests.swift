import Foundation
@testable import RecipeImport
import RecipeModel
import RecipeProtocol
import TestThreads
import Testing

/// One small hand-written page per kind of mistake the importer once made on real sites.
@Suite("Import quality: sections, step titles, images, notes and pages without structured data", .onOwnThread)
struct QualityTests {
    func page(_ json: String, head: String = "") -> String {
        "<html><head>\(head)<script type=\"application/ld+json\">\(json)</script></head><body>x</body></html>"
    }

    @Test("sections and step titles are kept, numbering labels and repeated text are not titles, and they go back out as HowToSection / HowToStep.name")
    func sectionsAndTitles() throws {
        let recipe = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Pie","recipeInstructions":[
              {"@type":"HowToSection","name":"For the crust","itemListElement":[
                {"@type":"HowToStep","name":"Rub in the butter","text":"Rub the butter into the flour until it looks like crumbs."},
                {"@type":"HowToStep","name":"Chill the dough.","text":"Chill the dough. An hour is enough."}]},
              {"@type":"HowToStep","name":"Step 3","text":"Bake for 40 minutes."},
              {"@type":"HowToStep","name":"Schritt 4","text":"Cool."},
              {"@type":"HowToStep","name":"pie_r step 5","text":"Serve with <a href=\"/cream\">cream</a>, warm, with Berg&shy;käse."}]}
            """#), url: "https://e.com/pie"))
        let steps = recipe.draft.instructions
        #expect(steps.map(\.title) == ["Rub in the butter", nil, nil, nil, nil])
        #expect(steps.map(\.section) == ["For the crust", "For the crust", nil, nil, nil])
        #expect(steps.last?.text == "Serve with cream, warm, with Bergkäse.", "inline tags leave no space; soft hyphens go")
        let output = recipe.schemaOrg.recipeInstructions
        #expect(output.count == 4)
        #expect(output[0].type == "HowToSection" && output[0].name == "For the crust" && output[0].itemListElement?.count == 2)
        #expect(output[0].itemListElement?.first?.name == "Rub in the butter")
        #expect(output[1].type == "HowToStep" && output[1].name == nil && output[1].text == "Bake for 40 minutes.")
        // What a reader of schema.org makes of it, the way the reference lists steps.
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(output)) as? [[String: Any]]
        #expect(encoded?.first?["@type"] as? String == "HowToSection")
        #expect(output.reduce(0) { $0 + $1.stepCount } == 5)
        #expect(throws: Never.self) { try recipe.draft.validate() }
    }

    @Test("numbered steps run together in one text are parted; blank lines separate steps whose lines only wrap")
    func runTogetherSteps() throws {
        let numbered = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Eggs","recipeInstructions":[{"@type":"HowToStep","text":"1. Preheat the oven to 325°F.2. Whisk 2 eggs with 1.5 cups milk.3) Bake for 18 minutes."}]}
            """#), url: "https://e.com/eggs"))
        #expect(numbered.draft.instructions.map(\.text) == ["Preheat the oven to 325°F.", "Whisk 2 eggs with 1.5 cups milk.", "Bake for 18 minutes."])
        let wrapped = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Noodles","recipeInstructions":"Cook noodles according to\npackage directions.\n\nToss with the sauce."}
            """#), url: "https://e.com/noodles"))
        #expect(wrapped.draft.instructions.map(\.text) == ["Cook noodles according to package directions.", "Toss with the sauce."])
        // A step that merely starts with a number is left whole.
        let plain = try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"X","recipeInstructions":["1. Mix 2 cups flour."]}"#), url: "https://e/"))
        #expect(plain.draft.instructions.map(\.text) == ["1. Mix 2 cups flour."])
    }

    @Test("yields: the text as written, the count (a range's upper end) and the thing counted, the servings from the count")
    func yields() throws {
        let cases: [(String, [String])] = [
            ("10-12 blondies", ["12 blondies", "12 servings", "10 servings"]),
            ("1 Bundt Cake (10\")", ["1 cake", "1 serving"]),
            ("70 pizzelles approximately 35 of each flavor", ["70 pizzelles", "70 servings"]),
            ("Serves 4", ["4 servings"]),
            ("Makes 6", ["6 items", "6 servings"]),
            ("4 to 6 people", ["6 servings", "4 servings"]),
            ("2 Pie Crusts", ["2 pies", "2 servings"]),
            ("1 9x13” loaf tin", ["1 loaf", "1 serving"]),
            ("4 1.25 cups curry lentils + 1 cup rice", ["4 cups", "4 servings"]),
            ("4 Portionen", ["4 servings"]),
            ("40 falafel", ["40 falafel", "40 servings"]),
        ]
        for (written, forms) in cases {
            #expect(YieldText.read(written)?.forms == forms, "\(written)")
        }
        #expect(YieldText.read("a big bowl") == nil)
        let recipe = try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"B","recipeYield":"10-12 blondies"}"#), url: "https://e/"))
        #expect(recipe.draft.recipeYield == "10-12 blondies" && recipe.draft.servings == 12)
        #expect(recipe.schemaOrg.recipeYield == ["10-12 blondies", "12 blondies", "12 servings", "10 servings"])
    }

    @Test("durations as sites write them: empty ISO parts, words in several languages; a missing total is the parts added up")
    func durations() throws {
        func recipe(_ times: String) throws -> RecipeDraft {
            try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"T",\#(times)}"#), url: "https://e/")).draft
        }
        #expect(try recipe(#""cookTime":"PTH25MS","prepTime":"PTH5MS""#).cookTime == "PT25M")
        #expect(try recipe(#""cookTime":"PTH25MS","prepTime":"PTH5MS""#).totalTime == "PT30M")
        #expect(try recipe(#""prepTime":"1 hour 30 mins""#).prepTime == "PT1H30M")
        #expect(try recipe(#""prepTime":"45 Minuten""#).totalTime == "PT45M", "prep alone is the total")
        #expect(try recipe(#""cookTime":"1h30""#).cookTime == "PT1H30M")
        #expect(try recipe(#""cookTime":"soon""#).cookTime == nil)
        // Absurd spoken durations are out of range, never a trap.
        for absurd in ["99999999999999999999 hours", "9999999999999999999999 minutes", "99999999999999999999 h 99999999999999999999 min",
                       "9223372036854775807 min", "600000 hours"] {
            #expect(try recipe(#""cookTime":"\#(absurd)""#).cookTime == nil, "\(absurd)")
        }
        #expect(RecipeExtractor.spokenMinutes("99999999999999999999 hours") == nil)
    }

    @Test("a recipe plugin's doubled parentheses are undone; nested ones are kept")
    func doubledParentheses() throws {
        let recipe = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Stew","recipeIngredient":["1 scotch bonnet ((optional))","2 pounds beef, (cut into cubes (any cut will work))","½ teaspoon lemon pepper seasoning ((optional))"]}
            """#), url: "https://e.com/stew"))
        #expect(recipe.draft.ingredients.map(\.text) == [
            "1 scotch bonnet (optional)", "2 pounds beef, (cut into cubes (any cut will work))", "½ teaspoon lemon pepper seasoning (optional)",
        ])
        // A list split at every comma is joined back; a list that merely has some lines with a leading space is not.
        let split = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Auflauf","recipeIngredient":["250 g Schweinefleisch", " in Stücken", " 1 Ei", " 1", "5 TL Senf", " 1 TL Kräuter (Thymian", " Oregano)", " Salz", " frisch gemahlener Pfeffer"]}
            """#), url: "https://e.com/auflauf"))
        #expect(split.draft.ingredients.map(\.text) == ["250 g Schweinefleisch, in Stücken", "1 Ei", "1,5 TL Senf", "1 TL Kräuter (Thymian, Oregano)", "Salz", "frisch gemahlener Pfeffer"])
        let spaced = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Soup","recipeIngredient":["1 onion", " chopped finely", "2 carrots", "1 l stock", "salt"]}
            """#), url: "https://e.com/soup"))
        #expect(spaced.draft.ingredients.map(\.text) == ["1 onion", "chopped finely", "2 carrots", "1 l stock", "salt"])
        let tidied = try #require(RecipeExtractor.extract(html: page(#"""
            {"@type":"Recipe","name":"Mix","recipeIngredient":["- 300 g emmental","2/3 cupÂ orange juice","2.0 Zehen Knoblauch","1Zwiebel","1 lb bok choy (, chopped (see above))","0.5 Bund Petersilie"]}
            """#), url: "https://e.com/mix"))
        #expect(tidied.draft.ingredients.map(\.text) == [
            "300 g emmental", "2/3 cup orange juice", "2 Zehen Knoblauch", "1 Zwiebel", "1 lb bok choy , chopped (see above)", "0.5 Bund Petersilie",
        ])
    }

    @Test("the image: the largest the page declares or names, never a thumbnail when the page lists a larger variant, never the site's logo")
    func imageChoice() throws {
        func first(_ shared: String?, _ images: [String]) throws -> String? {
            let head = shared.map { #"<meta property="og:image" content="\#($0)">"# } ?? ""
            let list = images.map { "\"\($0)\"" }.joined(separator: ",")
            return try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"X","image":[\#(list)]}"#, head: head),
                                                        url: "https://e.com/x")).images.first
        }
        // A WordPress thumbnail as the sharing image: the full image it was cut from.
        #expect(try first("https://e.com/wp-content/uploads/pie-500x500.jpg",
                          ["https://e.com/wp-content/uploads/pie.jpg", "https://e.com/wp-content/uploads/pie-500x500.jpg"])
                == "https://e.com/wp-content/uploads/pie.jpg")
        // A 448-px crop beside the 1,600-px one of the same picture.
        #expect(try first("https://ichef.e.com/food/ic/food_16x9_448/recipes/cake_16x9.jpg",
                          ["https://ichef.e.com/food/ic/food_16x9_1600/recipes/cake_16x9.jpg"])
                == "https://ichef.e.com/food/ic/food_16x9_1600/recipes/cake_16x9.jpg")
        #expect(try first("https://cdn.e.com/a.jpg?width=768", ["https://cdn.e.com/a.jpg?width=1200", "https://cdn.e.com/a.jpg?width=300"])
                == "https://cdn.e.com/a.jpg?width=1200")
        // A copy of known size that is no thumbnail is preferred to an original of unknown size.
        #expect(try first("https://e.com/uploads/pie-1200x800.jpg", ["https://e.com/uploads/pie.jpg"]) == "https://e.com/uploads/pie-1200x800.jpg")
        // An 800-px copy is a thumbnail beside its original; any 1,000-px side is not.
        #expect(try first("https://e.com/uploads/pie-800x533.jpg", ["https://e.com/uploads/pie.jpg"]) == "https://e.com/uploads/pie.jpg")
        #expect(try first("https://e.com/uploads/pie-683x1024.jpg", ["https://e.com/uploads/pie.jpg"]) == "https://e.com/uploads/pie-683x1024.jpg")
        // A sharing image 1,200 px wide or more is kept; a different picture is never taken for a variant.
        #expect(try first("https://e.com/uploads/pie-1600x900.jpg", ["https://e.com/uploads/tart.jpg", "https://e.com/uploads/pie.jpg"])
                == "https://e.com/uploads/pie-1600x900.jpg")
        #expect(try first("https://e.com/uploads/pie-500x500.jpg", ["https://e.com/uploads/tart.jpg"]) == "https://e.com/uploads/pie-500x500.jpg")
        // The site's logo as the sharing image: the recipe's own photo.
        #expect(try first("https://e.com/wp-content/uploads/site-logo.png", ["https://e.com/uploads/stew.jpg"]) == "https://e.com/uploads/stew.jpg")
        // Sizes the page declares: og:image:width/height after its og:image, ImageObject width/height (as numbers, text or values).
        func chosen(_ head: String, _ image: String) throws -> String? {
            try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"X","image":\#(image)}"#, head: head),
                                                 url: "https://e.com/x")).images.first
        }
        #expect(try chosen(#"<meta property="og:image" content="https://e.com/share.jpg"><meta property="og:image:width" content="1200"><meta property="og:image:height" content="630">"#,
                           #"["https://e.com/own.jpg"]"#) == "https://e.com/share.jpg")
        #expect(try chosen(#"<meta property="og:image" content="https://e.com/share.jpg"><meta property="og:image:width" content="300">"#,
                           #"[{"@type":"ImageObject","url":"https://e.com/a.jpg","width":"640px","height":480},{"@type":"ImageObject","url":"https://e.com/b.jpg","width":{"@type":"QuantitativeValue","value":1600},"height":900}]"#)
                == "https://e.com/b.jpg")
        #expect(try chosen(#"<meta name="twitter:image" content="https://e.com/tw-1600x900.jpg">"#, #""https://e.com/own-500x500.jpg""#)
                == "https://e.com/tw-1600x900.jpg")
        // A hostile page's megabyte-long addresses and thousands of images are not read.
        let long = "https://e.com/" + String(repeating: "a", count: 1_000_000) + ".jpg"
        #expect(try first(nil, [long, "https://e.com/ok.jpg"]) == "https://e.com/ok.jpg")
        let many = (0..<5_000).map { "https://e.com/p\($0)-100x100.jpg" }
        #expect(try first(many[0], many) == many[0])
        // Addresses the page wrote out in full are kept as written, not re-encoded.
        #expect(try first(nil, ["https://e.com/uploads/Coxa-Elétrica.jpg"]) == "https://e.com/uploads/Coxa-Elétrica.jpg")
    }

    @Test("a page without schema.org: title, ingredients and steps under their headings, in several languages, with a note to check it")
    func pagesWithoutStructuredData() throws {
        let english = """
            <html><head><title>Mango Guacamole - Rick's Kitchen</title><meta property="og:image" content="https://e.com/mango.jpg">
            <meta name="description" content="A sweet guacamole."></head><body>
            <nav><ul><li>Recipes</li><li>Ingredients</li><li>About</li></ul></nav>
            <h1>Mango Guacamole</h1><p>Serves 4. Preparation time: 10 minutes</p>
            <h2>INGREDIENTS</h2><ul><li>3 large avocados</li><li>1/2 small red onion, diced<li>1 mango, diced</ul>
            <h2>Instructions</h2><ol><li>1. Halve the avocados and scoop out the flesh.</li><li>2. Mash with the onion, fold in the mango.</li></ol>
            <h3>Notes</h3><p>Keeps a day.</p><footer><h3>Related recipes</h3><ul><li>Salsa</li><li>Nachos</li></ul></footer>
            </body></html>
            """
        let recipe = try #require(RecipeExtractor.extract(html: english, url: "https://e.com/mango"))
        #expect(recipe.draft.name == "Mango Guacamole")
        #expect(recipe.draft.ingredients.map(\.text) == ["3 large avocados", "1/2 small red onion, diced", "1 mango, diced"])
        #expect(recipe.draft.instructions.map(\.text) == ["Halve the avocados and scoop out the flesh.", "Mash with the onion, fold in the mango."])
        #expect(recipe.draft.description == "A sweet guacamole." && recipe.images == ["https://e.com/mango.jpg"])
        #expect(recipe.readWithoutStructuredData && recipe.draft.notes == ImportedRecipe.unstructuredNote)
        #expect(throws: Never.self) { try recipe.draft.validate() }

        let pages: [(String, String, String)] = [
            ("Zutaten für 4 Personen", "Zubereitung", "de"), ("Ingrédients", "Préparation", "fr"), ("Ingredientes", "Elaboración", "es"),
            ("Ingredienti", "Preparazione", "it"), ("Ingrediënten", "Bereiding", "nl"), ("Ingredienser", "Gör så här", "sv"),
        ]
        for (ingredients, method, language) in pages {
            let html = """
                <html lang="\(language)"><body><h1>Soup</h1><p><strong>\(ingredients)</strong></p>
                <p>500 g tomatoes</p><p>1 onion</p><p>\(method):</p><p>Chop everything and simmer it for twenty minutes.</p></body></html>
                """
            let found = RecipeExtractor.extract(html: html, url: "https://e.com/soup")
            #expect(found?.draft.ingredients.map(\.text) == ["500 g tomatoes", "1 onion"], "\(language)")
            #expect(found?.draft.instructions.map(\.text) == ["Chop everything and simmer it for twenty minutes."], "\(language)")
        }
    }

    @Test("a \"<\" that opens no tag is text: temperatures, comparisons and hearts keep it and what follows, in JSON-LD and microdata")
    func lessThanIsText() throws {
        let cases = [
            ("Bake at <180°C for 20 min, then at >200°C.", "Bake at <180°C for 20 min, then at >200°C."),
            ("Cook < 5 minutes, until the edges are > golden", "Cook < 5 minutes, until the edges are > golden"),
            ("We <3 this cake", "We <3 this cake"),
            ("1 cup <b>butter</b>, soft", "1 cup butter, soft"),
            ("a <!-- note --> b", "a b"),
            ("Use <a lot of salt", "Use <a lot of salt"), // never closed: text, not a tag to the end of the line
            ("x </ y", "x </ y"),
            ("keep &lt;3 and <i>this</i>", "keep <3 and this"),
        ]
        for (written, shown) in cases { #expect(HTMLText.clean(written) == shown, "\(written)") }
        // U+0000 means nothing on a page, and the storage refuses text that holds it: the importer drops it.
        #expect(HTMLText.clean("Tom\u{0}ato\u{0} soup") == "Tomato soup")
        // Nor do escape sequences a terminal would obey (the clipboard written, the screen cleared), nor C1 controls.
        #expect(HTMLText.clean("Soup\u{1B}]52;c;ZWNobw==\u{7}\u{1B}[2J\u{9B}\u{7F}") == "Soup]52;c;ZWNobw==[2J")
        #expect(HTMLText.clean("a\tb\r\nc") == "a b c")
        // Combining marks stacked past Unicode's stream-safe limit (30) are cut there, so the recipe is storable.
        let stacked = try #require(RecipeExtractor.extract(json: ["@type": "Recipe", "name": "Z" + String(repeating: "\u{301}", count: 5_000)], url: nil))
        #expect(stacked.draft.name.unicodeScalars.count == 31 && (try? stacked.draft.validate()) != nil)
        let withNUL = try #require(RecipeExtractor.extract(json: ["@type": "Recipe", "name": "\u{0}Soup", "recipeIngredient": ["1 egg\u{0}"]], url: nil))
        #expect(withNUL.draft.name == "Soup" && withNUL.draft.ingredients.map(\.text) == ["1 egg"])
        let json: [String: Any] = ["@type": "Recipe", "name": "Cake <3", "recipeIngredient": ["200 g sugar (< 1 cup)"],
                                   "recipeInstructions": ["Bake at <180°C until a skewer comes out clean."]]
        let recipe = try #require(RecipeExtractor.extract(json: json, url: "https://e.com/cake"))
        #expect(recipe.draft.name == "Cake <3")
        #expect(recipe.draft.ingredients.map(\.text) == ["200 g sugar (< 1 cup)"])
        #expect(recipe.draft.instructions.map(\.text) == ["Bake at <180°C until a skewer comes out clean."])
        let microdata = """
            <div itemscope itemtype="https://schema.org/Recipe"><h1 itemprop="name">Cake</h1>
            <li itemprop="recipeIngredient">2 eggs &lt;60 g each</li>
            <div itemprop="recipeInstructions">Bake until the centre reads &lt; 95°C.</div></div>
            """
        let read = try #require(RecipeExtractor.extract(html: microdata, url: "https://e.com/r"))
        #expect(read.draft.ingredients.map(\.text) == ["2 eggs <60 g each"])
        #expect(read.draft.instructions.map(\.text) == ["Bake until the centre reads < 95°C."])
    }

    @Test("pieces of text in elements side by side are apart, text inside a word stays whole: in JSON-LD, microdata and headings")
    func inlinePieces() throws {
        #expect(HTMLText.clean("<span>150 g</span><span>rice</span>, <a href=x>carrot</a>s, then") == "150 g rice, carrots, then")
        let microdata = """
            <div itemscope itemtype="https://schema.org/Recipe"><h1 itemprop="name">Risotto</h1>
            <li itemprop="recipeIngredient"><span>150 g</span><span>Risottoreis</span></li>
            <li itemprop="recipeIngredient"><b>1</b> onion<i>s</i></li>
            <div itemprop="recipeInstructions">Cook it.</div></div>
            """
        let recipe = try #require(RecipeExtractor.extract(html: microdata, url: "https://e.com/r"))
        #expect(recipe.draft.ingredients.map(\.text) == ["150 g Risottoreis", "1 onions"])
        let headings = """
            <h1>Soup</h1><h2>Ingredients</h2><ul><li><span>2</span><span>leeks</span></li><li>1 <em>small</em> onion</li></ul>
            <h2>Method</h2><ol><li>Cook the <a href="/leeks">leek</a>s slowly for twenty minutes.</li></ol>
            """
        let read = try #require(RecipeExtractor.extract(html: headings, url: "https://e.com/s"))
        #expect(read.draft.ingredients.map(\.text) == ["2 leeks", "1 small onion"])
        #expect(read.draft.instructions.map(\.text) == ["Cook the leeks slowly for twenty minutes."])
    }

    @Test("pages without schema.org laid out other ways: numbered step headings, steps with no heading, parts of one list item, a script with `a<b` before the recipe")
    func otherLayoutsWithoutStructuredData() throws {
        // A script's comparison is no tag: it must not hide the rest of the page.
        let script = "<script>for(r=0;r<o.length;r++)x();</script>"
        // "What You’ll Need" (a typographic apostrophe) over groups; the steps as numbered headings, each over its text.
        let numbered = """
            <html><body>\(script)<h1>Sheet Pan Pitas</h1><h2>What You’ll Need</h2><h3>For the Chicken:</h3>
            <ul><li>1.5 lbs chicken thighs</li><li>1 red onion, sliced</li></ul><h3>For Serving:</h3><ul><li>4 pitas</li></ul>
            <h2>Step-by-Step Instructions</h2><h3>1. Preheat your oven to 425°F</h3><p>We want it nice and hot.</p>
            <h3>2. Into the oven</h3><p>Roast for 20 minutes.</p><p>Flip halfway through.</p><h2>Leftovers</h2><ul><li>Keeps 3 days.</li></ul></body></html>
            """
        let recipe = try #require(RecipeExtractor.extract(html: numbered, url: "https://e.com/pitas"))
        #expect(recipe.draft.name == "Sheet Pan Pitas")
        #expect(recipe.draft.ingredients.map(\.text) == ["1.5 lbs chicken thighs", "1 red onion, sliced", "4 pitas"])
        #expect(recipe.draft.instructions.map(\.text) == ["We want it nice and hot.", "Roast for 20 minutes. Flip halfway through."])
        #expect(recipe.draft.instructions.map(\.title) == ["Preheat your oven to 425°F", "Into the oven"])
        // "Step 1" headings are numbers, not titles; the amount and the rest of a line in separate elements of one item.
        let steps = """
            <h1>Charred Spaghetti</h1><p>Ingredients</p><ul><li><div>1</div><div>can tomato puree</div></li><li><div>12</div><div>ounces spaghetti</div></li></ul>
            <h3>Step 1</h3><p>Combine the puree with boiling water.</p><h3>Step 2</h3><p>Cook the spaghetti in the sauce until crusty.</p>
            """
        let spaghetti = try #require(RecipeExtractor.extract(html: steps, url: "https://e.com/spaghetti"))
        #expect(spaghetti.draft.ingredients.map(\.text) == ["1 can tomato puree", "12 ounces spaghetti"])
        #expect(spaghetti.draft.instructions.map(\.text) == ["Combine the puree with boiling water.", "Cook the spaghetti in the sauce until crusty."])
        #expect(spaghetti.draft.instructions.allSatisfy { $0.title == nil })
        // No method heading: the sentences right after the ingredient list.
        let unheaded = """
            <h1>Ribs</h1><p>Ingredients</p><ul><li>Baby back ribs</li><li>1 cup brown sugar</li></ul><p>Optional</p><ul><li>BBQ sauce</li></ul>
            <p>Prepare your smoker at 275 degrees with hickory wood.</p><p>Remove the membrane off the back of the rack.</p>
            <ul><li>Facebook</li><li>Twitter</li></ul>
            """
        let ribs = try #require(RecipeExtractor.extract(html: unheaded, url: "https://e.com/ribs"))
        #expect(ribs.draft.ingredients.map(\.text) == ["Baby back ribs", "1 cup brown sugar", "BBQ sauce"])
        #expect(ribs.draft.instructions.map(\.text) == ["Prepare your smoker at 275 degrees with hickory wood.", "Remove the membrane off the back of the rack."])
        // Microdata properties of a recipe with no Recipe item around them (older themes).
        let orphans = """
            <h1 itemprop="headline">Tagliatelles carbonara</h1><h3 itemprop="recipeYield">Pour 2 personnes</h3>
            <ul><li itemprop="ingredients">250 g de tagliatelles</li><li itemprop="ingredients">1 oeuf</li></ul>
            <div itemprop="recipeInstructions"><p>Battez l'œuf.</p><p>Mélangez avec les pâtes.</p></div>
            """
        let carbonara = try #require(RecipeExtractor.extract(html: orphans, url: "https://e.com/carbonara"))
        #expect(carbonara.draft.name == "Tagliatelles carbonara" && carbonara.draft.servings == 2)
        #expect(carbonara.draft.ingredients.map(\.text) == ["250 g de tagliatelles", "1 oeuf"])
        #expect(carbonara.draft.instructions.map(\.text) == ["Battez l'œuf.", "Mélangez avec les pâtes."])
        #expect(!carbonara.readWithoutStructuredData)
        // Page source with Windows line ends ("\r\n\r\n" is no blank line between paragraphs): each line a step.
        let crlf = "<div itemscope itemtype=\"http://schema.org/Recipe\"><h1 itemprop=\"name\">Sprouts</h1><span itemprop=\"recipeIngredient\">1 lb sprouts</span>"
            + "<div itemprop=\"recipeInstructions\">\r\n\t<h3>Roast the sprouts.</h3>\r\n\t<h3>Turn them once.</h3>\r\n\r\n\t<h3>Season them well.</h3>\r\n</div></div>"
        let sprouts = try #require(RecipeExtractor.extract(html: crlf, url: "https://e.com/sprouts"))
        #expect(sprouts.draft.instructions.map(\.text) == ["Roast the sprouts.", "Turn them once.", "Season them well."])
    }

    @Test("a yield and times the page shows only as text, and a byline on a page without schema.org")
    func yieldAndBylineFromText() throws {
        func yield(_ body: String) throws -> [String] {
            try #require(RecipeExtractor.extract(html: page(#"{"@type":"Recipe","name":"X","recipeIngredient":["1 egg"]}"#) + body,
                                                 url: "https://e.com/x")).yields
        }
        #expect(try yield("<p>Serves: 4 | Total Time: 35 minutes</p>") == ["4"])
        #expect(try yield("<ul><li>Makes 4 to 6 servings</li></ul>") == ["4 to 6 servings"])
        #expect(try yield("<p>Yield:</p><p>20 to 22</p>") == ["20 to 22"])
        #expect(try yield("<h3>4 portioner</h3>") == ["4 portioner"])
        #expect(try yield("<p>Zutaten für 4 Personen</p><p>Für 2 Personen</p>") == ["2 Personen"])
        #expect(try yield("<p>Serving Size: 4-6</p>") == ["4-6"])
        // Not a yield: serving suggestions, an amount per serving, a sentence.
        #expect(try yield("<p>Serving suggestions:</p><p>warm bread</p><p>Serving Size: 1 cup</p><p>Serve and enjoy 4 ways!</p>") == [])
        // Times shown as text, where the recipe gives none.
        func times(_ body: String, recipe: String = #"{"@type":"Recipe","name":"X","recipeIngredient":["1 egg"]}"#) throws -> [String?] {
            let draft = try #require(RecipeExtractor.extract(html: page(recipe) + body, url: "https://e.com/x")).draft
            return [draft.totalTime, draft.prepTime, draft.cookTime]
        }
        #expect(try times("<p>Serves: 4 | Total Time: 35 minutes</p><p>Prep Time: 5 minutes</p><p>Cook Time: 1 hour 10 minutes</p>")
                == ["PT35M", "PT5M", "PT1H10M"])
        #expect(try times("<p>Préparation 15 min</p><p>Cuisson 1h10</p>") == ["PT1H25M", "PT15M", "PT1H10M"], "the total from the parts")
        #expect(try times("<p>Preparation 20 minutes</p><p>Cooking 1 hour</p><p>Total: 4 servings</p>") == ["PT1H20M", "PT20M", "PT1H"])
        #expect(try times("<p>Tempo de preparo</p><p>30</p><p>minutos</p><li>30 min Preparation Time</li>") == ["PT30M", "PT30M", nil])
        #expect(try times("<p>Cook Time: 20 minutes</p>", recipe: #"{"@type":"Recipe","name":"X","recipeIngredient":["1 egg"],"cookTime":"PT45M"}"#)
                == ["PT45M", nil, "PT45M"], "the recipe's own time wins")
        // Not times: a sentence that mentions one, a label over a step.
        #expect(try times("<p>Prep the onions: 10 minutes in a pan, then serve.</p><h2>Cook time</h2><p>Bake until golden, about 20 minutes.</p>")
                == [nil, nil, nil])
        let recipe = try #require(RecipeExtractor.extract(html: """
            <h1>Charred Spaghetti</h1><p>By Rose Hattabaugh April 4, 2023</p><ul><li>Makes</li><li>4 to 6 servings</li></ul>
            <h2>Ingredients</h2><ul><li>1 can tomato puree</li><li>12 ounces spaghetti</li></ul>
            <h2>Method</h2><ol><li>Combine the puree with boiling water.</li><li>Cook the spaghetti in it.</li></ol>
            """, url: "https://e.com/spaghetti"))
        #expect(recipe.draft.author == "Rose Hattabaugh")
        #expect(recipe.draft.servings == 6)
    }

    @Test("white space is collapsed byte by byte exactly as Unicode's white space reads (10,000 generated texts)")
    func collapseMatchesUnicode() {
        let pieces = ["a", "Zutaten", " ", "  ", "\t", "\n", "\r\n", "\u{0B}", "\u{0C}", "\u{1C}", "\u{85}", "\u{A0}", "\u{1680}",
                      "\u{2000}", "\u{2005}", "\u{200A}", "\u{200B}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}",
                      "é", "€", "’", "‐", "ー", "ᚠ", "\u{2030}", "\u{20AC}", "¡", "\u{C2}", "材料", "🍝"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<10_000 {
            var text = ""
            for _ in 0..<Int(state % 12) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int((state >> 33) % UInt64(pieces.count))]
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            #expect(HTMLText.collapse(text) == text.split(whereSeparator: \.isWhitespace).joined(separator: " "), "\(Array(text.unicodeScalars))")
        }
    }

    @Test("an article that only mentions ingredients, or has a list with no method, gives no recipe")
    func noFalseRecipes() {
        let pages = [
            "<html><body><h1>Our favourite ingredients</h1><p>We love tomatoes.</p><ul><li>Tomatoes</li><li>Basil</li></ul></body></html>",
            "<html><body><h1>Shop</h1><h2>Ingredients</h2><ul><li>Flour</li><li>Sugar</li></ul><p>Buy now.</p></body></html>",
            "<html><body><h1>X</h1><h2>Ingredients</h2><ul><li>Flour</li></ul><h2>Method</h2><ol><li>Bake.</li></ol></body></html>",
            // A list followed by one sentence, and numbered headings that do not count 1, 2, 3.
            "<h1>Pantry</h1><h2>Ingredients</h2><ul><li>Flour</li><li>Sugar</li></ul><p>These are the staples every kitchen should keep.</p>",
            "<h1>Top</h1><h2>Ingredients</h2><ul><li>Flour</li><li>Sugar</li></ul><h3>10. Best flour brands</h3><p>Our ranking of flours.</p><h3>9. Sugar</h3><p>The sugars.</p>",
        ]
        for html in pages { #expect(RecipeExtractor.extract(html: html, url: "https://e.com/") == nil, "\(html)") }
    }

    @Test("hostile pages for the heading reader: unclosed tags, deep nesting, a huge page of headings; bounded and without a crash")
    func hostileHeadingPages() {
        let unclosed = "<html><body><h1>Soup<h2>Ingredients<ul><li>1 egg<li>2 eggs<h2>Method<ol><li>Boil them for ten minutes in salted water."
        #expect(RecipeExtractor.extract(html: unclosed, url: "https://e.com/")?.draft.instructions.count == 1)
        let deep = String(repeating: "<div><li><h2>", count: 50_000) + "Ingredients"
        #expect(RecipeExtractor.extract(html: deep, url: "https://e.com/") == nil)
        let many = "<h1>T</h1>" + String(repeating: "<h2>Ingredients</h2><li>a</li><li>b</li>", count: 30_000)
        #expect(HeadingReader.blocks(in: many).count <= HeadingReader.maxBlocks)
        #expect(RecipeExtractor.extract(html: many, url: "https://e.com/") == nil)
        // Headings with no words at all (digits, punctuation, emoji, nothing but an ideograph).
        for odd in ["123", "!!!", ":", "🍝🍝", "—", "材", "4 -"] {
            let html = "<h1>\(odd)</h1><h2>\(odd)</h2><p>\(odd):</p><h2>Ingredients</h2><ul><li>1 egg</li><li>2 eggs</li></ul><h2>\(odd)</h2>"
            #expect(RecipeExtractor.extract(html: html, url: "https://e.com/") == nil, "\(odd)")
        }
        let comment = "<h1>T</h1><!-- never closed <h2>Ingredients</h2>"
        #expect(RecipeExtractor.extract(html: comment, url: "https://e.com/") == nil)
    }
}
