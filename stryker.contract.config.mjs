// `npm run mutate -- --part contract`: `mu plugin check`, the conformance
// checks a plugin author runs. What a check proves is judged by the fixture
// tests: the correct plugins pass every check, and each broken fixture fails
// exactly the check written for it. It is the tests part
// (stryker.tests.config.mjs) with these tests and modules.
// MU_MUTATE_CONTRACT_TESTS (a comma list of test files) picks the tests that
// reach the modules a run mutates: the whole set takes minutes per mutant.
import tests, { testsRunner } from "./stryker.tests.config.mjs";

export const CONTRACT_TESTS = [
  "test/contract.test.ts",
  "test/contract-fixtures.test.ts",
  "test/contract-host-fixture.test.ts",
  "test/contract-job-fixture.test.ts",
  "test/contract-channel-fixture.test.ts",
];

export default {
  ...tests,
  commandRunner: testsRunner(process.env.MU_MUTATE_CONTRACT_TESTS?.split(",") ?? CONTRACT_TESTS),
  mutate: ["host/contract/**/*.ts", "host/verbs/plugin-check.ts"],
  htmlReporter: { fileName: "reports/mutation/contract.html" },
  jsonReporter: { fileName: "reports/mutation/mutation-contract.json" },
  incrementalFile: "reports/mutation/incremental-contract.json",
  // A check waits out real deadlines (a plugin that never answers): room for them.
  timeoutMS: 240_000,
};
