import RecipeProtocol
import TestThreads
import Testing

@Suite("Durations as messages say them", .onOwnThread)
struct DurationTextTests {
    @Test("whole seconds, tenths above a second, milliseconds below", arguments: [
        (Duration.seconds(5), "5 s"), (.seconds(60), "60 s"), (.milliseconds(1_500), "1.5 s"), (.milliseconds(1_000), "1 s"),
        (.milliseconds(250), "250 ms"), (.milliseconds(999), "999 ms"), (.zero, "0 ms"), (.microseconds(300), "0 ms"),
    ])
    func spoken(duration: Duration, text: String) {
        #expect(duration.spokenText == text)
    }
}
