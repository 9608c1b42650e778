import { defineConfig } from "vitest/config";

// The test set Stryker runs for `npm run mutate`: the scenario files on the
// virtual engine and a short explorer run, nothing else. The unit tests stay
// out on purpose, so the score says how much of mu's deciding code the
// testbed itself would catch going wrong.
export default defineConfig({
  test: {
    include: ["test/mutation/**/*.mutate.ts"],
    // Virtual time: a slow run is the machine, never a verdict.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
