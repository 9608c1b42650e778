// `npm run mutate -- --part tests`: modules no scenario file can reach,
// judged by test files: arguments that are not UTF-8 (a step's words are
// JSON text), a build whose bundle or code cache is missing or spoiled, the
// bin's fallback to tsc's files, the error paths of real file calls, the
// build's validator step. As in the real part, Stryker builds the mutated
// sources into the sandbox's dist/ and runs the tests with the command
// runner; the test helpers hand the active mutant to every mu they start
// (mutantEnv() in test/helpers.ts), and a test's own imports run it in the
// test's process. MU_MUTATE_TESTS (a comma list of test files) names the
// tests, `--mutate` the modules.
import real from "./stryker.real.config.mjs";

export const TESTS = [
  "test/not-utf8.test.ts",
  "test/code-cache.test.ts",
  "test/errors.test.ts",
  "test/real-ports.test.ts",
  "test/build-validators.test.ts",
];

/** The command runner for these test files, with the usual test setup. */
export const testsRunner = (files) => ({
  command: `npx vitest run --config vitest.mutate-tests.config.ts ${files.join(" ")}`,
});

export default {
  ...real,
  commandRunner: testsRunner(process.env.MU_MUTATE_TESTS?.split(",") ?? TESTS),
  mutate: [
    "host/cli/argv-utf8.ts",
    "host/ports/raw-argv.ts",
    "host/cli/verb-bundle.ts",
    "host/cli/main.ts",
    "host/errors.ts",
    "host/ports/real.ts",
    "host/protocol/build-validators.ts",
  ],
  htmlReporter: { fileName: "reports/mutation/tests.html" },
  jsonReporter: { fileName: "reports/mutation/mutation-tests.json" },
  incrementalFile: "reports/mutation/incremental-tests.json",
  timeoutMS: 120_000,
};
