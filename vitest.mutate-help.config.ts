import { defineConfig } from "vitest/config";

// The test set for `npm run mutate -- --part help`: the CLI's command
// definitions are mostly the words of its help, which no scenario prints
// whole; the help snapshot and the help marks hold them, run through mu's
// own entry point in this process.
export default defineConfig({
  test: {
    include: ["test/cli-help.test.ts", "test/cli-help-marks.test.ts"],
    testTimeout: 120_000,
  },
});
