import { defineConfig } from "vitest/config";
import base from "./vitest.config";

// The test set of `npm run mutate -- --part tests` and `--part contract`:
// the test files named on the command line (stryker.tests.config.mjs), with
// the usual setup, so a test that leaves a process behind fails the run and
// kills the mutant. A test's own imports of the mutated modules run the
// active mutant too, since the worker has Stryker's variable.
export default defineConfig({
  test: {
    ...base.test,
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
