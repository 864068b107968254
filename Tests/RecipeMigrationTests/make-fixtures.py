#!/usr/bin/env python3
"""Builds the migration fixtures under Fixtures/ by hand from each app's documented format
(docs/MIGRATE.md). Run it again after changing it: python3 Tests/RecipeMigrationTests/make-fixtures.py
Needs the `vips` command (libvips-tools) for the small photos; the outputs are committed."""
import gzip, io, json, os, shutil, subprocess, tempfile, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "Fixtures")

def photo(kind, seed, width=48, height=32):
    """A small noisy picture made by libvips: `kind` is jpg, png or webp."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, cast, out = (os.path.join(tmp, n) for n in ("a.v", "b.v", "out." + kind))
        subprocess.run(["vips", "gaussnoise", raw, str(width), str(height), "--mean", str(60 + seed * 40), "--sigma", "30", "--seed", str(seed)], check=True)
        subprocess.run(["vips", "cast", raw, cast, "uchar"], check=True)
        subprocess.run(["vips", "bandjoin", f"{cast} {cast} {cast}", os.path.join(tmp, "c.v")], check=True)
        target = out + ("[Q=80,strip]" if kind == "jpg" else "[strip]" if kind != "webp" else "[Q=80,strip]")
        subprocess.run(["vips", "copy", os.path.join(tmp, "c.v"), target], check=True)
        return open(out, "rb").read()

def gz(obj):
    return gzip.compress(json.dumps(obj, ensure_ascii=False).encode(), mtime=0)

def zip_bytes(files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 5))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buffer.getvalue()

def write(path, data):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

shutil.rmtree(OUT, ignore_errors=True)
jpeg, jpeg2, png, webp = photo("jpg", 1), photo("jpg", 2), photo("png", 3), photo("webp", 4)
write("photos/brulee.jpg", jpeg)
write("photos/pancakes.jpg", jpeg2)
write("photos/shakshuka.png", png)
write("photos/salad.webp", webp)

# Paprika 3: .paprikarecipes = zip of NAME.paprikarecipe, each gzip-compressed JSON.
brulee = {
    "uid": "5D3E0F0A-1B2C-4D5E-8F90-A1B2C3D4E5F6", "name": "Crème brûlée à l'orange — «classique»",
    "ingredients": "500 ml crème fraîche (35 %)\n5 jaunes d'œufs\n100 g sucre\n\n1 orange, zeste",
    "directions": "Chauffer la crème avec le zeste.\n\nFouetter les jaunes et le sucre ; verser la crème.\nCuire 45 min à 150 °C au bain-marie.",
    "notes": "Caraméliser au chalumeau juste avant de servir.", "nutritional_info": "Calories: 420 kcal\nFat: 35 g",
    "servings": "6 ramequins", "prep_time": "15 mins", "cook_time": "45 min", "total_time": "1 hr 10 mins",
    "difficulty": "Medium", "rating": 4, "on_favorites": 1, "categories": ["Desserts", "Français"],
    "source": "Grand-mère Odette", "source_url": "https://example.org/creme-brulee", "image_url": "",
    "photo": "brulee.jpg", "photo_data": __import__("base64").b64encode(jpeg).decode(), "photos": [],
    "created": "2019-03-04 12:34:56", "description": "Un classique à l'orange 🍊.", "hash": "x",
}
pancakes = {
    "uid": "0C6E9F5B-2F43-4A43-9A86-6E2C2B7A1D11", "name": "Fluffy Pancakes", "ingredients": "2 cups flour\n2 eggs\n1 1/2 cups milk",
    "directions": "Mix.\nFry in butter.", "servings": "4", "prep_time": "overnight", "cook_time": "20 minutes", "total_time": "",
    "rating": 0, "on_favorites": 0, "categories": [], "source": "", "source_url": "", "notes": "", "nutritional_info": "",
    "photo_data": __import__("base64").b64encode(jpeg2).decode(), "photo": "pancakes.jpg",
    "photos": [{"name": "stack", "filename": "stack.png", "data": __import__("base64").b64encode(png).decode()}],
    "created": "2021-11-20 08:00:00",
}
no_name = dict(pancakes, uid="11111111-2222-4333-8444-555555555555", name="")
write("paprika/Recipes.paprikarecipes", zip_bytes([
    ("Crème brûlée à l'orange.paprikarecipe", gz(brulee)),
    ("Fluffy Pancakes.paprikarecipe", gz(pancakes)),
    ("Fluffy Pancakes (copy).paprikarecipe", gz(pancakes)),       # the same recipe again
    ("Broken gzip.paprikarecipe", b"\x1f\x8b\x08\x00garbage that is not deflate"),
    ("Bad JSON.paprikarecipe", gzip.compress(b'{"uid": "X", "name": "Unfinished', mtime=0)),
    ("No name.paprikarecipe", gz(no_name)),
    ("__MACOSX/._Fluffy Pancakes.paprikarecipe", b"\x00\x05\x16\x07 resource fork"),
    (".DS_Store", b"\x00\x00\x00\x01Bud1"),
]))
write("paprika-folder/Fluffy Pancakes.paprikarecipe", gz(pancakes))
write("paprika-folder/Crème brûlée.paprikarecipe", gz(brulee))

# Mealie 1.x recipe export: recipes/<slug>/<slug>.json and recipes/<slug>/images/original.webp.
mealie = {
    "id": "7f1d9c2e-3b4a-4c5d-9e8f-0a1b2c3d4e5f", "slug": "gado-gado", "name": "Gado-gado (Ñoño's way)", "description": "Indonesian salad with peanut sauce.",
    "recipeYield": "4 servings", "recipeServings": 4, "totalTime": "1 hour", "prepTime": "30 minutes", "cookTime": "", "performTime": "20 minutes",
    "recipeCategory": [{"name": "Salad", "slug": "salad"}], "tags": [{"name": "Vegetarian"}, {"name": "Peanut"}], "tools": [{"name": "Mortar"}],
    "rating": 5, "orgURL": "https://example.org/gado-gado", "dateAdded": "2023-05-06", "createdAt": "2023-05-06T10:11:12.123456",
    "recipeIngredient": [
        {"title": "Sauce", "note": "", "quantity": 150, "unit": {"name": "g"}, "food": {"name": "peanuts"}, "display": "150 g peanuts", "originalText": "150 g peanuts"},
        {"title": "", "note": "to taste", "quantity": 0, "unit": None, "food": None, "display": "to taste", "disableAmount": True},
        {"title": "", "note": "finely sliced", "quantity": 0.5, "unit": {"name": "cup"}, "food": {"name": "cabbage"}, "display": ""},
    ],
    "recipeInstructions": [{"title": "Sauce", "text": "Grind the peanuts."}, {"title": "", "text": "Loosen with water."}, {"title": "Salad", "text": "Blanch the vegetables."}],
    "nutrition": {"calories": "380", "fatContent": "22", "proteinContent": None},
    "notes": [{"title": "Tip", "text": "Use kecap manis."}], "extras": {"spice": "medium"},
}
broken = "{\"id\": \"x\", \"name\": \"Half"
no_name_m = dict(mealie, id="00000000-0000-4000-8000-000000000001", slug="nameless", name="")
write("mealie/mealie-export.zip", zip_bytes([
    ("recipes/gado-gado/gado-gado.json", json.dumps(mealie, ensure_ascii=False)),
    ("recipes/gado-gado/images/original.webp", webp),
    ("recipes/gado-gado/images/min-original.webp", webp),
    ("recipes/broken/broken.json", broken),
    ("recipes/nameless/nameless.json", json.dumps(no_name_m)),
]))
# Mealie backup: database.json (tables as row lists) and data/recipes/<id>/images/.
rid = "7f1d9c2e3b4a4c5d9e8f0a1b2c3d4e5f"
database = {
    "recipes": [
        {"id": rid, "name": "Gado-gado (Ñoño's way)", "slug": "gado-gado", "description": "Indonesian salad.", "recipe_yield": "4 servings",
         "total_time": "1 hour", "prep_time": "30 minutes", "cook_time": None, "perform_time": "20 minutes", "org_url": "https://example.org/gado-gado",
         "rating": 5, "date_added": "2023-05-06", "created_at": "2023-05-06T10:11:12"},
        {"id": "aaaaaaaabbbb4ccc8dddeeeeeeeeeeee", "name": "", "slug": "empty"},
    ],
    "recipes_ingredients": [
        {"recipe_id": rid, "position": 1, "title": None, "note": "finely sliced", "quantity": 0.5, "unit_id": "u1", "food_id": "f2", "original_text": None},
        {"recipe_id": rid, "position": 0, "title": "Sauce", "note": "", "quantity": 150, "unit_id": "u2", "food_id": "f1", "original_text": None},
    ],
    "recipe_instructions": [{"recipe_id": rid, "position": 0, "title": "", "text": "Grind the peanuts."}, {"recipe_id": rid, "position": 1, "title": "", "text": "Toss everything."}],
    "ingredient_foods": [{"id": "f1", "name": "peanuts"}, {"id": "f2", "name": "cabbage"}],
    "ingredient_units": [{"id": "u1", "name": "cup"}, {"id": "u2", "name": "g"}],
    "categories": [{"id": "c1", "name": "Salad"}], "recipes_to_categories": [{"recipe_id": rid, "category_id": "c1"}],
    "tags": [{"id": "t1", "name": "Vegetarian"}], "recipes_to_tags": [{"recipe_id": rid, "tag_id": "t1"}],
    "notes": [{"recipe_id": rid, "title": "Tip", "text": "Use kecap manis."}],
    "recipe_nutrition": [{"id": "n1", "recipe_id": rid, "calories": "380", "fat_content": "22"}],
    "users_to_favorites": [{"user_id": "u", "recipe_id": rid}],
}
write("mealie/mealie-backup.zip", zip_bytes([
    ("database.json", json.dumps(database, ensure_ascii=False)),
    ("data/recipes/7f1d9c2e-3b4a-4c5d-9e8f-0a1b2c3d4e5f/images/original.webp", webp),
    ("data/recipes/7f1d9c2e-3b4a-4c5d-9e8f-0a1b2c3d4e5f/images/tiny-original.webp", webp),
]))

# Tandoor: an export zip holding one zip per recipe (recipe.json + image).
tandoor = {
    "name": "Käsespätzle", "description": "Swabian noodles with cheese & onions.", "keywords": [{"name": "German"}, {"name": "Comfort"}],
    "working_time": 30, "waiting_time": 15, "internal": True, "servings": 4, "servings_text": "portions", "source_url": "https://example.org/spaetzle",
    "nutrition": {"calories": 650, "fats": 30, "carbohydrates": 70, "proteins": 25},
    "steps": [
        {"name": "Dough", "instruction": "Beat the eggs into the flour until it blisters.", "time": 10, "order": 0, "ingredients": [
            {"food": {"name": "Teig"}, "is_header": True, "order": 0},
            {"food": {"name": "flour"}, "unit": {"name": "g"}, "amount": 400, "note": "type 405", "order": 1},
            {"food": {"name": "eggs"}, "unit": None, "amount": 4, "order": 2},
            {"food": {"name": "salt"}, "unit": None, "amount": 0, "no_amount": True, "order": 3}]},
        {"name": "", "instruction": "Scrape into boiling water; layer with cheese and fried onions.", "order": 1, "ingredients": [
            {"food": {"name": "Bergkäse"}, "unit": {"name": "g"}, "amount": 200, "order": 0}]},
    ],
}
write("tandoor/tandoor-export.zip", zip_bytes([
    ("12.zip", zip_bytes([("recipe.json", json.dumps(tandoor, ensure_ascii=False)), ("image.jpg", jpeg)])),
    ("13.zip", b"PK\x03\x04 this inner zip is cut short"),
    ("14.zip", zip_bytes([("recipe.json", json.dumps(dict(tandoor, name="")))])),
    ("15.zip", zip_bytes([("image.png", png)])),
]))

# Cooklang: .cook files with photos beside them.
write("cooklang/Shakshuka.cook", """---
title: Shakshuka (شakshouka)
servings: 2
tags: [breakfast, eggs]
time: 25 minutes
source: https://example.org/shakshuka
---

>> course: brunch

-- the base
Warm @olive oil{2%tbsp} in a #cast iron pan{}. Add @onion{1}(diced) and cook for ~{5%minutes}.

Add @tinned tomatoes{400%g}, @cumin{1%tsp} and @salt. Simmer ~sauce{10%minutes}.

= Eggs
Crack @eggs{4} into wells [- not too close -] and cover until set.

> Serve with bread.
""")
write("cooklang/Shakshuka.png", png)
write("cooklang/Shakshuka.1.jpg", jpeg)
write("cooklang/Latin-1.cook", "Caf\xe9 au lait with @milk{200%ml}.".encode("latin-1"))
write("cooklang/Tea.cook", ">> servings: 1\n\nSteep @tea{1%bag} in @water{250%ml} for ~{4%minutes}.\n")

# Chowdown: _recipes/*.md with YAML front matter; images/ at the site's root.
write("chowdown/_recipes/guacamole.md", """---
layout: recipe
title: "Guacamole: the real one"
image: guacamole.jpg
imagecredit: https://example.org/photo
tags: mexican, dip

ingredients:
- 3 avocados
- 1 lime, juiced
- 1/2 tsp salt

directions:
- Mash the avocados.
- Stir in lime and salt.
---

A dip for every day.

Keep the stone in to stop browning.
""")
write("chowdown/images/guacamole.jpg", jpeg)
write("chowdown/_recipes/body-lists.md", """---
layout: recipe
title: Lemonade
---

## Ingredients

* 4 lemons
* 1 l water

## Directions

1. Squeeze.
2. Stir.
""")
write("chowdown/_recipes/broken.md", b"---\ntitle: \xff\xfe broken\n---\n")
write("chowdown/README.md", "# My recipes\n")
print("fixtures written to", OUT)
