import Foundation

/// Which of a page's image addresses stands for the recipe.
///
/// The page's sharing image (`og:image`) is the one its authors chose for it, so it comes first,
/// unless it is the site's logo or icon, or another cut of the recipe's own first image (then that image,
/// the sharing one being a crop for social previews). A chosen image narrower than `upgradeBelow` pixels (by the
/// size its address names: `-500x500.jpg`, `/w400-h228/`, `?width=768`) gives way to a larger
/// variant of the same picture when the page lists one, and to the original (an address without a
/// size) before any resized copy; among images the recipe lists with declared widths (`ImageObject.width`), the widest:
/// imports keep sharp photos, never a thumbnail when a larger one is there.
enum ImageChoice {
    /// Widths below this are thumbnails or in-page crops; 1,200 px is what sharing previews ask for.
    static let upgradeBelow = 1_200

    /// `recipeImages` (the recipe's own, in the page's order) and `shared` (the sharing image), best first, each once.
    static func ordered(recipeImages: [String], shared: String?, declaredWidths: [String: Int] = [:]) -> [String] {
        func width(_ address: String) -> Int? { Self.width(address) ?? declaredWidths[address] }
        var candidates = recipeImages
        if let shared, !candidates.contains(shared) { candidates.append(shared) }
        guard !candidates.isEmpty else { return [] }
        let logos = Set(candidates.filter(looksLikeLogo))
        var primary = shared.flatMap { logos.contains($0) ? nil : $0 } ?? candidates.first { !logos.contains($0) } ?? candidates[0]
        // The recipe's own image and the sharing image are two cuts of one picture: the recipe's (the sharing one is a social crop).
        if primary == shared, let own = recipeImages.first, own != primary, pictureKey(own) == pictureKey(primary) { primary = own }
        var best = primary
        if let primaryWidth = width(primary), primaryWidth < upgradeBelow {
            let key = pictureKey(primary)
            var bestWidth: Int? = primaryWidth
            // Variants: the same picture by its address, or images the recipe lists with declared sizes (sizes of one photo).
            let sized = declaredWidths[primary] != nil
            for candidate in candidates where candidate != primary && (pictureKey(candidate) == key || (sized && declaredWidths[candidate] != nil)) {
                let candidateWidth = width(candidate)
                // No size in the address: the original, larger than any resized copy of it.
                if let current = bestWidth, candidateWidth.map({ $0 > current }) ?? true {
                    best = candidate
                    bestWidth = candidateWidth
                }
            }
        }
        return [best] + candidates.filter { $0 != best && !logos.contains($0) } + candidates.filter { $0 != best && logos.contains($0) }
    }

    /// A site's logo, icon or stock sharing picture rather than a photo of the dish.
    static func looksLikeLogo(_ address: String) -> Bool {
        // The address before its query, lower-cased ASCII, searched byte by byte.
        let file = Array(address.utf8.prefix { $0 != UInt8(ascii: "?") }.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 })
        return logoWords.contains { word in
            guard word.count <= file.count else { return false }
            return (0...(file.count - word.count)).contains { start in file[start..<(start + word.count)].elementsEqual(word) }
        }
    }

    private static let logoWords = ["logo", "favicon", "site-icon", "siteicon", "ogimage", "og-image-default", "placeholder", "default-image",
                                    "share-default"].map { Array($0.utf8) }

    /// The width an address names, if it names one.
    static func width(_ address: String) -> Int? {
        guard let components = URLComponents(string: address) else { return nil }
        let path = components.percentEncodedPath
        if let match = path.matches(of: Patterns.sizeSuffix).last { return Int(match.output.1) }
        // A folder naming the crop's width: `/food_16x9_448/`.
        if let match = path.firstMatch(of: Patterns.widthFolder) { return Int(match.output.1) }
        if let match = path.firstMatch(of: Patterns.sizeFolder) {
            let found = match.output.1 ?? match.output.2 ?? match.output.3 ?? match.output.4 ?? match.output.5
            return found.flatMap { Int($0) }
        }
        for item in components.queryItems ?? [] where ["w", "width", "imwidth", "resize"].contains(item.name.lowercased()) {
            if let value = item.value, let number = value.firstMatch(of: Patterns.leadingNumber) { return Int(number.output.1) }
        }
        return nil
    }

    /// The picture an address shows, whatever size or crop of it: host and path without size markers or query.
    static func pictureKey(_ address: String) -> String {
        guard let components = URLComponents(string: address) else { return address }
        var path = components.percentEncodedPath.lowercased()
        path.replace(Patterns.sizeFolder, with: "/")
        path.replace(Patterns.widthFolder) { "/\($0.output.0.dropFirst().dropLast().dropLast($0.output.1.count + 1))/" }
        path.replace(Patterns.sizeSuffix, with: "")
        if path.firstRange(of: "-scaled") != nil { path.replace("-scaled", with: "") }
        let host = (components.host ?? "").lowercased()
        return (host.hasPrefix("www.") ? String(host.dropFirst(4)) : host) + path
    }

    /// The patterns, compiled once (a regex literal is parsed each time it is made).
    private enum Patterns {
        nonisolated(unsafe) static let sizeSuffix = #/[-_](\d{2,5})x\d{2,5}/#
        nonisolated(unsafe) static let widthFolder = #/\/[A-Za-z]+(?:_\d+x\d+)?_(\d{3,4})\//#
        nonisolated(unsafe) static let sizeFolder = #/\/(?:w(\d{2,5})-h\d+[^\/]*|s(\d{2,5})|crop-(\d{2,5})x\d+|(\d{2,5})x\d{2,5}|w_(\d{2,5})[^\/]*)\//#
        nonisolated(unsafe) static let leadingNumber = #/^(\d{2,5})/#
    }
}
