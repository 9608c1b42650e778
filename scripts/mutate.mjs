#!/usr/bin/env node
// `npm run mutate [-- STRYKER-ARGS]`: Stryker over mu's deciding modules
// (stryker.config.mjs), then the markdown summary beside its reports. Extra
// arguments go to Stryker: `--mutate host/verbs/wait.ts` for one part,
// `--incremental` to re-test only what changed since the last run,
// `--concurrency 1` on a shared machine.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const stryker = join(root, "node_modules", ".bin", "stryker");
const run = spawnSync(stryker, ["run", "stryker.config.mjs", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
});
if (run.status !== 0) process.exit(run.status ?? 1);
const summary = spawnSync(
  process.execPath,
  [join(root, "scripts", "mutation-summary.mjs"), join(root, "reports", "mutation", "mutation.json")],
  { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
);
if (summary.status !== 0) process.exit(summary.status ?? 1);
mkdirSync(join(root, "reports", "mutation"), { recursive: true });
writeFileSync(join(root, "reports", "mutation", "summary.md"), summary.stdout);
process.stdout.write("summary: reports/mutation/summary.md\n");
