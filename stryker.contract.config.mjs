// `npm run mutate -- --part contract`: `mu plugin check`, the conformance
// checks a plugin author runs. What a check proves is judged by the fixture
// tests: the correct plugins pass every check, and each broken fixture fails
// exactly the check written for it. Those tests start mu as a real process,
// so, as in the real part, Stryker builds the mutated sources into the
// sandbox's dist/ and runs them with the command runner; the test helpers
// hand the active mutant to every mu they start (test/helpers.ts).
// MU_MUTATE_CONTRACT_TESTS (a comma list of test files) picks the tests that
// reach the modules a run mutates: the whole set takes minutes per mutant.
import real from "./stryker.real.config.mjs";

export const CONTRACT_TESTS = [
  "test/contract.test.ts",
  "test/contract-fixtures.test.ts",
  "test/contract-host-fixture.test.ts",
  "test/contract-job-fixture.test.ts",
  "test/contract-channel-fixture.test.ts",
];

const tests = process.env.MU_MUTATE_CONTRACT_TESTS?.split(",") ?? CONTRACT_TESTS;

export default {
  ...real,
  commandRunner: { command: `npx vitest run --config vitest.mutate-contract.config.ts ${tests.join(" ")}` },
  mutate: ["host/contract/**/*.ts", "host/verbs/plugin-check.ts"],
  htmlReporter: { fileName: "reports/mutation/contract.html" },
  jsonReporter: { fileName: "reports/mutation/mutation-contract.json" },
  incrementalFile: "reports/mutation/incremental-contract.json",
  // A check waits out real deadlines (a plugin that never answers): room for them.
  timeoutMS: 240_000,
};
