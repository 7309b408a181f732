import Foundation

/// Writes results.json, the catch-up chart and results.md into the output folder.
enum Output {
    static func write(_ bench: Bench) throws {
        let folder = bench.options.outputFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let jsonPath = folder + "/results.json"
        let data = try JSONSerialization.data(withJSONObject: bench.results.json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: jsonPath))
        chart(bench, json: jsonPath, png: folder + "/catchup.png")
        // The hand-written analysis of the misses belongs to the committed full run only.
        let analysisPath = bench.options.root + "/Benchmarks/analysis.md"
        let full = !bench.options.quick && !bench.options.isPartial
        let analysis = full ? try? String(contentsOfFile: analysisPath, encoding: .utf8) : nil
        try bench.results.markdown(analysis: analysis).write(toFile: folder + "/results.md", atomically: true, encoding: .utf8)
        Progress.say("wrote \(folder)/results.json, results.md, catchup.png")
    }

    /// matplotlib draws the chart; without it the run still writes its tables, with a note.
    private static func chart(_ bench: Bench, json: String, png: String) {
        let script = bench.options.root + "/Benchmarks/scripts/chart.py"
        guard let python = Subprocess.which("python3"),
              let check = try? Subprocess.run(python, ["-c", "import matplotlib"]), check.status == 0 else {
            bench.results.skip("catchup.png", "matplotlib is not installed (pip install matplotlib)")
            return
        }
        guard let result = try? Subprocess.run(python, [script, json, png], stderr: .inherit), result.status == 0 else {
            bench.results.skip("catchup.png", "chart.py failed")
            return
        }
        bench.results.notes.append("catchup.png: catch-up time and bytes on the wire against store size, from the chart series of results.json.")
    }
}
