import Foundation

/// Which of a page's image addresses stands for the recipe.
///
/// The candidates are the recipe's own images (schema.org `image`, in the page's order) and the page's sharing images
/// (`og:image`, `twitter:image`). The largest wins, by the size the page declares (`ImageObject.width`/`height`,
/// `og:image:width`/`height`) or the size its address names (`-500x500.jpg`, `/w400-h228/`, `?width=768&height=400`);
/// an address without a size that other listed addresses are resized copies of (`pie.jpg` beside `pie-500x500.jpg`)
/// is the original, larger than any of them. Among equals (or when no size is known) the recipe's first image, then its
/// others, then the sharing ones. A site's logo or icon comes last: imports keep sharp photos of the dish, never a
/// thumbnail when a larger one is there.
enum ImageChoice {
    /// A resized copy smaller than this on its long side is a thumbnail: the original it was cut from is preferred.
    static let thumbnailBelow = 1_000

    /// A size a page declares for an image; either side may be unknown.
    struct Size: Equatable, Sendable {
        var width: Int?
        var height: Int?

        /// Pixels, or one side squared when only one is known.
        var area: Int? {
            switch (width, height) {
            case let (width?, height?): return width.multipliedReportingOverflow(by: height).overflow ? Int.max / 2 : width * height
            case let (side?, nil), let (nil, side?): return side.multipliedReportingOverflow(by: side).overflow ? Int.max / 2 : side * side
            default: return nil
            }
        }

        /// Each side this one leaves unknown, taken from `other`.
        func filled(from other: Size?) -> Size {
            Size(width: width ?? other?.width, height: height ?? other?.height)
        }
    }

    /// `recipeImages` (the recipe's own, in the page's order, with the sizes it declares) and `shared` (the page's
    /// sharing images with theirs), best first, each once.
    static func ordered(recipeImages: [String], declared: [String: Size] = [:], shared: [(address: String, size: Size)] = []) -> [String] {
        var addresses: [String] = []
        var sizes: [String: Size] = [:]
        var rank: [String: Int] = [:]  // 2: the recipe's first image, 1: its others, 0: sharing images
        for (index, address) in recipeImages.enumerated() where rank[address] == nil {
            addresses.append(address)
            rank[address] = index == 0 ? 2 : 1
            sizes[address] = declared[address]
        }
        for (address, size) in shared {
            if rank[address] == nil {
                addresses.append(address)
                rank[address] = 0
            }
            sizes[address] = (sizes[address] ?? Size()).filled(from: size)
        }
        guard !addresses.isEmpty else { return [] }
        let logos = Set(addresses.filter(looksLikeLogo))
        // Each address's size: declared, else named in it (read once per address).
        var named: [String: Size] = [:]
        var areas: [String: Int] = [:]
        for address in addresses {
            if let size = Self.size(address) { named[address] = size }
            sizes[address] = (sizes[address] ?? Size()).filled(from: named[address])
            if let area = sizes[address]?.area { areas[address] = area }
        }
        func longSide(_ address: String) -> Int { max(sizes[address]?.width ?? 0, sizes[address]?.height ?? 0) }
        // An original beside thumbnails cut from it: larger than the largest of them.
        let originals = addresses.filter { areas[$0] == nil && named[$0] == nil && !logos.contains($0) }
        if !originals.isEmpty, !areas.isEmpty {
            let keys = Dictionary(addresses.map { ($0, pictureKey($0)) }, uniquingKeysWith: { first, _ in first })
            for address in originals {
                let copies = addresses.filter { $0 != address && keys[$0] == keys[address] && areas[$0] != nil }
                guard !copies.isEmpty, copies.allSatisfy({ longSide($0) < thumbnailBelow }) else { continue }
                areas[address] = copies.compactMap { areas[$0] }.max()! + 1
            }
        }
        let order = Dictionary(addresses.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        func before(_ a: String, _ b: String) -> Bool {
            let aLogo = logos.contains(a), bLogo = logos.contains(b)
            if aLogo != bLogo { return bLogo }
            let aArea = areas[a] ?? 0, bArea = areas[b] ?? 0
            if aArea != bArea { return aArea > bArea }
            if rank[a]! != rank[b]! { return rank[a]! > rank[b]! }
            return order[a]! < order[b]!
        }
        guard let best = addresses.min(by: before) else { return [] }
        return [best] + addresses.filter { $0 != best && !logos.contains($0) } + addresses.filter { $0 != best && logos.contains($0) }
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

    /// The size an address names, if it names one: `-500x375.jpg`, `/w400-h228/`, `/food_16x9_448/`, `?width=768&height=400`.
    static func size(_ address: String) -> Size? {
        let components = AddressParts(address)
        let path = components.path
        if let match = path.matches(of: Patterns.sizeSuffix).last { return Size(width: Int(match.output.1), height: Int(match.output.2)) }
        // A folder naming the crop's width: `/food_16x9_448/`.
        if let match = path.firstMatch(of: Patterns.widthFolder) { return Size(width: Int(match.output.1)) }
        if let match = path.firstMatch(of: Patterns.sizeFolder) {
            let width = match.output.1 ?? match.output.3 ?? match.output.4 ?? match.output.6 ?? match.output.8
            let height = match.output.2 ?? match.output.5 ?? match.output.7
            return Size(width: width.flatMap { Int($0) }, height: height.flatMap { Int($0) })
        }
        var size = Size()
        for item in components.queryItems {
            guard let value = item.value, let number = value.firstMatch(of: Patterns.leadingNumber).flatMap({ Int($0.output.1) }) else { continue }
            switch item.name.lowercased() {
            case "w", "width", "imwidth": size.width = size.width ?? number
            case "h", "height": size.height = size.height ?? number
            case "resize": size.width = size.width ?? number
            default: break
            }
        }
        return size.width == nil && size.height == nil ? nil : size
    }

    /// The picture an address shows, whatever size or crop of it: host and path without size markers or query.
    static func pictureKey(_ address: String) -> String {
        let components = AddressParts(address)
        var path = components.path.lowercased()
        path.replace(Patterns.sizeFolder, with: "/")
        path.replace(Patterns.widthFolder) { "/\($0.output.0.dropFirst().dropLast().dropLast($0.output.1.count + 1))/" }
        path.replace(Patterns.sizeSuffix, with: "")
        if path.firstRange(of: "-scaled") != nil { path.replace("-scaled", with: "") }
        let host = components.host.lowercased()
        return (host.hasPrefix("www.") ? String(host.dropFirst(4)) : host) + path
    }

    /// An image address's host, path and query items, as written (no percent-decoding; sizes are plain digits):
    /// read by hand, as URLComponents costs more than the rest of the choice.
    struct AddressParts {
        var host = Substring()
        var path = Substring()
        var queryItems: [(name: Substring, value: Substring?)] = []

        init(_ address: String) {
            var rest = Substring(address)
            if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
            var query = Substring()
            if let mark = rest.firstIndex(of: "?") {
                query = rest[rest.index(after: mark)...]
                rest = rest[..<mark]
            }
            if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] } else if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            else { path = rest; rest = "" }
            if !rest.isEmpty {
                let slash = rest.firstIndex(of: "/") ?? rest.endIndex
                host = rest[..<slash]
                path = rest[slash...]
            }
            queryItems = query.split(separator: "&").prefix(32).map { item in
                guard let equals = item.firstIndex(of: "=") else { return (item, nil) }
                return (item[..<equals], item[item.index(after: equals)...])
            }
        }
    }

    /// The patterns, compiled once (a regex literal is parsed each time it is made).
    private enum Patterns {
        nonisolated(unsafe) static let sizeSuffix = #/[-_](\d{2,5})x(\d{2,5})/#
        nonisolated(unsafe) static let widthFolder = #/\/[A-Za-z]+(?:_\d+x\d+)?_(\d{3,4})\//#
        nonisolated(unsafe) static let sizeFolder = #/\/(?:w(\d{2,5})-h(\d+)[^\/]*|s(\d{2,5})|crop-(\d{2,5})x(\d+)|(\d{2,5})x(\d{2,5})|w_(\d{2,5})[^\/]*)\//#
        nonisolated(unsafe) static let leadingNumber = #/^(\d{2,5})/#
    }
}
