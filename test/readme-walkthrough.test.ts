import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muBin, tempState } from "./helpers.js";

// The README's agent walk-through must run as written: a reader copies it
// line by line. Only /tmp/world moves to this test's temp dir, and `npx mu`
// is the built binary (npx outside a checkout would look for a package).

let st: ReturnType<typeof tempState>;
beforeEach(() => {
  st = tempState();
});
afterEach(() => st.done());

function walkThrough(): string {
  const readme = readFileSync(join(packageRoot(), "README.md"), "utf8");
  const at = readme.indexOf("A walk-through, with the simulated plugin");
  expect(at).toBeGreaterThan(-1);
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!m?.[1]) throw new Error("no sh block after the walk-through's heading");
  return m[1];
}

it("runs the README's agent walk-through as written", () => {
  const world = join(st.dir, "world");
  const script = walkThrough().replaceAll("/tmp/world", world);
  const r = spawnSync(
    "/bin/sh",
    ["-ec", `npx() { [ "$1" = mu ] && shift; "${process.execPath}" "${muBin}" "$@"; }\n${script}`],
    {
      cwd: packageRoot(),
      env: { PATH: process.env.PATH ?? "", ...st.env },
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  expect(r.stderr).toBe("");
  expect(r.stdout).toMatch(/^registered sim /);
  expect(r.stdout).toMatch(/\nmain\/a settled runs=1: /);
  expect(r.stdout).toMatch(/\nclosed main\/a\n$/);
  expect(r.status).toBe(0);
});
