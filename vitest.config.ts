import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Real-process tests spawn children and wait on real signals; give them room
    // on a shared 2-core machine rather than asserting on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
