// `npm run mutate -- --real`: the part of the testbed the virtual engine
// cannot stand in for. The real spawner and the plugin's stop sequence run
// only with real processes, groups and signals, so no virtual scenario can
// reach a mutant there. Here Stryker builds the mutated sources into the
// sandbox's dist/ and runs real-engine scenario files with the command
// runner; the runner hands the active mutant's id to every mu it starts
// (sim/runner/mutant-env.ts). A mutant counts as killed when a scenario fails.
import base from "./stryker.config.mjs";

// Chosen to reach every path of spawner.ts and plugin-process.ts that a user
// can observe: a plain add (spawn, handshake, stop), a plugin that ignores
// shutdown (the grace, then the group kill), mu killed with SIGKILL and by a
// signal mid-call, a plugin that crashes or exits on its own, a handshake
// deadline, a first stderr line in mu's message, a helper that escaped the
// group holding the pipes, a plugin that closes its stdin, and the group
// faults (a helper that ignores shutdown, a slow leader, a leader that exits
// or crashes leaving a helper, a plugin that closes its stdout), a plugin
// that exits only at its stdin's end, not on shutdown, the environment a
// plugin is given, a registered file that cannot be executed, and a plugin
// that closed its stdin yet runs on (the EPIPE is all mu sees).
export const REAL_SCENARIOS = [
  "plugin/add-list-readd-rm",
  "plugin/eof-ignored",
  "plugin/mu-sigkilled",
  "plugin/signal-sigterm-mid-call",
  "plugin/signal-second-absorbed",
  "plugin/crash-before-reply",
  "plugin/handshake-deadline",
  "cli/sim-first-line",
  "plugin/escaped-helper-holds-pipes",
  "plugin/stdin-closed-by-plugin",
  "plugin/stop-helper-ignores-shutdown",
  "plugin/stop-slow-exit-within-grace",
  "plugin/stop-leader-exit-kills-group",
  "plugin/leader-crash-kills-helper",
  "plugin/stdout-closed-stops",
  "plugin/stop-exits-on-eof",
  "plugin/env-minus-local-only",
  "plugin/start-not-executable",
  "plugin/stdin-closed-runs-on",
];

// A run over other modules names the real scenarios that reach them
// (MU_MUTATE_REAL_SCENARIOS, a comma list): every mutant runs every listed
// file, so a list that reaches nothing else keeps the run short.
const scenarios = process.env.MU_MUTATE_REAL_SCENARIOS?.split(",") ?? REAL_SCENARIOS;

export default {
  ...base,
  testRunner: "command",
  commandRunner: { command: `node dist/sim/runner/main.js --jobs 4 ${scenarios.join(" ")}` },
  vitest: undefined,
  // tsc must build the instrumented sources, whose switches do not type-check.
  disableTypeChecks: "{host,sim,plugins,test}/**/*.ts",
  buildCommand: "node scripts/mutate-real-build.mjs",
  symlinkNodeModules: false,
  coverageAnalysis: "off",
  ignoreStatic: false,
  mutate: ["host/ports/spawner.ts", "host/plugin/plugin-process.ts"],
  htmlReporter: { fileName: "reports/mutation/real.html" },
  jsonReporter: { fileName: "reports/mutation/mutation-real.json" },
  incrementalFile: "reports/mutation/incremental-real.json",
  // Real scenarios wait real graces (5 s): room for that on a busy machine.
  timeoutMS: 60_000,
};
