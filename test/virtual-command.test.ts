import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// docs/virtual.md gives one command that runs a file on the virtual engine;
// this runs it as written (reports aside) and reads what it wrote.

it("the documented command runs one file on the virtual engine, and its report says what that engine kept", () => {
  const doc = readFileSync(join(packageRoot(), "docs/virtual.md"), "utf8");
  const line = /^npm run scenarios -- (--virtual [^\n]+)$/m.exec(doc);
  expect(line, "docs/virtual.md names the command").not.toBeNull();
  const reports = mkdtempSync(join(tmpdir(), "mu-virtual-cmd-"));
  try {
    const args = (line?.[1] ?? "").split(/\s+/);
    const r = spawnSync(
      process.execPath,
      [join(packageRoot(), "dist/sim/runner/main.js"), ...args, "--reports", reports],
      { encoding: "utf8" },
    );
    expect(r.stdout).toMatch(/^pass {2}host\/lookup-found-after-mu-sigkilled /m);
    expect(r.stdout).toMatch(/scenarios: 1 passed, 0 failed\n$/);
    expect(r.status).toBe(0);
    const each = join(reports, "latest", "host", "lookup-found-after-mu-sigkilled");
    const seq = readFileSync(join(each, "sequence.md"), "utf8");
    expect(seq).toContain("Run on the virtual engine");
    expect(seq).not.toContain("No plugin traffic");
    // mu is SIGKILLed at its crash point: the step says so, and the lookup that settles it crossed.
    expect(seq).toMatch(/: killed by SIGKILL\n/);
    expect(seq).toMatch(/\| mu to plugin \| `host\.lookup` \| 1 \|/);
    expect(existsSync(join(each, "transcript.ndjson"))).toBe(false);
  } finally {
    rmSync(reports, { recursive: true, force: true });
  }
}, 60_000);
