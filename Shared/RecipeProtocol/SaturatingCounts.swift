extension Int {
    /// `self + other`, staying at `Int.max` (or `Int.min`) where the sum would pass it. For counts another process
    /// sent (a replica's, a storage's): any `Int` at all, so they are added without trapping.
    public func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
