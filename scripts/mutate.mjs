#!/usr/bin/env node
// `npm run mutate [-- [--part virtual|real|help|tests|contract] STRYKER-ARGS]`: the testbed's
// mutation score, in parts that make one testbed. The virtual part
// (stryker.config.mjs) runs the scenario files on the virtual engine and a
// short explorer run against mu's deciding modules; the real part
// (stryker.real.config.mjs) runs real-engine scenario files against the code
// only real processes reach; the help part (stryker.help.config.mjs) runs the
// help snapshot against the CLI's command definitions; the tests part
// (stryker.tests.config.mjs) runs named test files against modules no
// scenario can reach (an argument that is not UTF-8, a spoiled build); the
// contract part (stryker.contract.config.mjs) runs the conformance tests
// against `mu plugin check`. Then one markdown
// summary over the reports, where a mutant any part detected counts as
// detected. Extra arguments go
// to Stryker: `--mutate host/verbs/wait.ts` for one file, `--concurrency 1`
// on a shared machine.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const stryker = join(root, "node_modules", ".bin", "stryker");
const args = process.argv.slice(2);
const at = args.indexOf("--part");
const only = at === -1 ? undefined : args.splice(at, 2)[1];
const PARTS = [
  { name: "virtual", config: "stryker.config.mjs", report: "mutation.json" },
  { name: "real", config: "stryker.real.config.mjs", report: "mutation-real.json" },
  { name: "help", config: "stryker.help.config.mjs", report: "mutation-help.json" },
  { name: "tests", config: "stryker.tests.config.mjs", report: "mutation-tests.json" },
  { name: "contract", config: "stryker.contract.config.mjs", report: "mutation-contract.json" },
];
const names = PARTS.map((p) => p.name);
if (only !== undefined && !names.includes(only)) {
  process.stderr.write(`mutate: --part takes ${names.slice(0, -1).join(", ")} or ${names.at(-1)}\n`);
  process.exit(2);
}
// Two runs in one checkout share the reports and incremental files, and
// clearing a sandbox by hand while its run is live makes every mutant left
// fail to start, which Stryker counts as killed: one run at a time.
const sandboxes = join(root, ".stryker-tmp");
if (existsSync(sandboxes) && readdirSync(sandboxes).length > 0) {
  process.stderr.write(
    "mutate: another mutation run is using this checkout (.stryker-tmp holds its sandbox); wait for it to end, or use a worktree of your own. If none runs, remove .stryker-tmp\n",
  );
  process.exit(2);
}
for (const part of PARTS) {
  if (only !== undefined && part.name !== only) continue;
  const run = spawnSync(stryker, ["run", part.config, ...args], { cwd: root, stdio: "inherit" });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
const reports = PARTS.map((p) => join(root, "reports", "mutation", p.report)).filter((f) => existsSync(f));
const summary = spawnSync(process.execPath, [join(root, "scripts", "mutation-summary.mjs"), ...reports], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"],
});
if (summary.status !== 0) process.exit(summary.status ?? 1);
mkdirSync(join(root, "reports", "mutation"), { recursive: true });
writeFileSync(join(root, "reports", "mutation", "summary.md"), summary.stdout);
process.stdout.write("summary: reports/mutation/summary.md\n");
