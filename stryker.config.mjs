// `npm run mutate`: the testbed's own mutation score. Stryker
// mutates the modules where mu decides, and counts a mutant killed when the
// scenario files on the virtual engine or a short explorer run notice it
// (vitest.mutate.config.ts). On demand only: not in CI, not in `npm test`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: false },
  coverageAnalysis: "perTest",
  mutate: [
    "host/effects/**/*.ts",
    "host/jobs/**/*.ts",
    "host/plugin/connection.ts",
    "host/plugin/plugin-process.ts",
    "host/ports/spawner.ts",
    "host/store/durable.ts",
    "host/verbs/wait.ts",
  ],
  // The sandbox needs the sources and the scenario files, not the build; and
  // docs/decisions.md, whose rule ids a scenario's `proves` may name.
  ignorePatterns: ["dist", "reports"],
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  incrementalFile: "reports/mutation/incremental.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
  // A mutant that loops in virtual time burns real time: cut it off, with
  // room for a machine shared by others (a slow run is not a kill).
  timeoutMS: 15_000,
  // A static mutant (module-level data: the rule table's prose, constants)
  // runs every test, half a minute or more here. Stryker reports them as
  // ignored with this reason; the summary counts them apart.
  ignoreStatic: true,
};
