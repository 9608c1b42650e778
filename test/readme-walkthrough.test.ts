import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muBin, tempState } from "./helpers.js";

// The README's tour and the agents walk-through in docs/ must run as
// written, and again: a reader copies them line by line, maybe twice. Only
// reports/ moves to this test's temp dir (and mktemp makes its directories
// there), `npx mu` is the built binary (npx outside a checkout would look for
// a package) and `npm run scenarios` the built runner.

// One home for the whole file: each block's second run meets what its first left.
let st: ReturnType<typeof tempState>;
beforeAll(() => {
  st = tempState();
});
afterAll(() => st.done());

/** Every sh block between `heading` and the next heading of its level or above (a phrase: the next block). */
function shBlocks(file: string, heading: string): string {
  const text = readFileSync(join(packageRoot(), file), "utf8");
  const at = text.indexOf(heading);
  expect(at, `${file} has no "${heading}"`).toBeGreaterThan(-1);
  const rest = text.slice(at + heading.length);
  const next = rest.search(/\n#{1,2} \S/);
  const section = next === -1 ? rest : rest.slice(0, next);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  if (blocks.length === 0) throw new Error(`no sh block under ${file}'s "${heading}"`);
  // A heading owns every block under it; a phrase in the text only the one it introduces.
  return heading.startsWith("#") ? blocks.join("") : (blocks[0] as string);
}

function run(script: string) {
  const reports = join(st.dir, "reports");
  const runner = join(packageRoot(), "dist", "sim", "runner", "main.js");
  const shims = [
    `npx() { [ "$1" = mu ] && shift; "${process.execPath}" "${muBin}" "$@"; }`,
    `npm() { [ "$1 $2 $3" = "run scenarios --" ] || return 9; shift 3; "${process.execPath}" "${runner}" --reports "${reports}" "$@"; }`,
  ].join("\n");
  const body = script.replaceAll("reports/latest", `${reports}/latest`);
  return spawnSync("/bin/sh", ["-ec", `${shims}\n${body}`], {
    cwd: packageRoot(),
    // No MU_STATE_DIR of the test's: the block must choose its own state.
    env: { PATH: process.env.PATH ?? "", HOME: st.dir, TMPDIR: st.dir },
    encoding: "utf8",
    timeout: 120_000,
  });
}

it.each([1, 2])(
  "runs the README's two-minute tour as written (run %i of two in one home)",
  (_n) => {
    const r = run(shBlocks("README.md", "## A two-minute tour"));
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^registered sim /);
    expect(r.stdout).toMatch(/\nsent msg-\S+ to main\/a \(baseline 0\)\n/);
    expect(r.stdout).toMatch(/\nmain\/a settled runs=1: sim: done with "build the parser"\n/);
    expect(r.stdout).toMatch(/\nclosed main\/a\n/);
    expect(r.stdout).toMatch(/\nscenarios: 1 passed, 0 failed\n/);
    expect(r.stdout).toMatch(/host\/lookup-found-after-mu-sigkilled/);
    expect(r.stdout).toMatch(/sequenceDiagram/);
    expect(r.status).toBe(0);
  },
);

it.each([1, 2])(
  "runs the agents walk-through in docs/agents.md as written (run %i of two in one home)",
  (_n) => {
    const r = run(shBlocks("docs/agents.md", "A walk-through, with the simulated plugin"));
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^registered sim /);
    expect(r.stdout).toMatch(/\nmain\/a settled runs=1: /);
    expect(r.stdout).toMatch(/\nclosed main\/a\n$/);
    expect(r.status).toBe(0);
  },
);
