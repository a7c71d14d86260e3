import Testing

@testable import UnifiedCache

@Suite struct FrequencySketchTests {
    @Test func countsEachKeyUpToFifteen() {
        var sketch = FrequencySketch()
        #expect(sketch.frequency(7) == 0)
        sketch.ensureCapacity(512)
        for count in 1...20 {
            sketch.increment(7)
            #expect(sketch.frequency(7) == min(count, FrequencySketch.maximumFrequency))
        }
        #expect(sketch.frequency(8) == 0)
    }

    /// After ten times the capacity increments every counter halves: old popularity fades.
    @Test func halvesEveryCounterAfterTenTimesTheCapacityIncrements() {
        var sketch = FrequencySketch()
        sketch.ensureCapacity(256)
        #expect(sketch.sampleSize == 2_560)
        for _ in 0..<12 { sketch.increment(1) }
        #expect(sketch.frequency(1) == 12)
        var hash: UInt32 = 100
        // Other keys' increments may collide with key 1's counters: the halving is judged against its count just before.
        var halved = false
        var before = 0
        for _ in 0..<3_000 where !halved {
            let size = sketch.size
            before = sketch.frequency(1)
            sketch.increment(hash)
            hash &+= 7_919
            halved = sketch.size < size
        }
        #expect(halved && before >= 12)
        #expect(sketch.frequency(1) == before / 2)
        #expect(sketch.size < sketch.sampleSize / 2)
    }

    /// A sketch sized by entries as they come: wider (starting over) when they outgrow it, else only its sample.
    @Test func growsWithTheEntries() {
        var sketch = FrequencySketch()
        sketch.ensureCapacity(10)
        #expect(sketch.width == FrequencySketch.minimumCapacity)
        sketch.increment(3)
        sketch.ensureCapacity(200)
        #expect(sketch.frequency(3) == 1 && sketch.sampleSize == 2_560)
        sketch.ensureCapacity(1_000)
        #expect(sketch.width == 1_024 && sketch.sampleSize == 10_000)
        #expect(sketch.frequency(3) == 0)
    }
}
