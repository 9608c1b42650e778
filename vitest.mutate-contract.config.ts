import { defineConfig } from "vitest/config";
import base from "./vitest.config";

// The test set of `npm run mutate -- --part contract`: the conformance tests,
// named on the command line (stryker.contract.config.mjs), with the usual
// setup, so a test that leaves a process behind fails the run and kills the
// mutant. The tests' own imports of host/contract (the list of check ids)
// run the active mutant too, since the worker has Stryker's variable.
export default defineConfig({
  test: {
    ...base.test,
    include: ["test/contract*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
