// `npm run mutate -- --part help`: the CLI's command definitions (names,
// arguments, options and the words of their help) against the whole help
// snapshot (vitest.mutate-help.config.ts). What a verb does when run is the
// other parts' to measure.
import base from "./stryker.config.mjs";

export default {
  ...base,
  vitest: { configFile: "vitest.mutate-help.config.ts", related: false },
  mutate: [
    "host/cli/agent-verbs.ts",
    "host/cli/host-verbs.ts",
    "host/cli/plugin-verbs.ts",
    "host/cli/task-verbs.ts",
    "host/cli/top-verbs.ts",
    "host/cli/program.ts",
  ],
  htmlReporter: { fileName: "reports/mutation/help.html" },
  jsonReporter: { fileName: "reports/mutation/mutation-help.json" },
  incrementalFile: "reports/mutation/incremental-help.json",
  timeoutMS: 30_000,
};
