import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { nodeScript } from "./helpers.js";

// With MU_SSH_TIMING naming a file, the ssh plugin appends a line per
// milestone (epoch ms, pid, what) for the bench to read; without it, it
// writes nothing. A file it cannot write never fails a call.

const timing = join(packageRoot(), "dist/plugins/ssh/timing.js");
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-ssh-timing-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(env: Record<string, string>) {
  const script = `const { mark } = await import(${JSON.stringify(timing)}); mark("call sent"); mark("reply read");`;
  return nodeScript(script, env);
}

describe("the ssh plugin's timing marks", () => {
  it("appends the start and each milestone, with the time and pid", () => {
    const file = join(dir, "t.log");
    const r = run({ MU_SSH_TIMING: file });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\d+\.\d (\d+) process start$/);
    const pid = lines[0]?.split(" ")[1];
    expect(lines[1]).toBe(`${lines[1]?.split(" ")[0]} ${pid} call sent`);
    expect(lines[2]).toMatch(new RegExp(`^\\d+\\.\\d ${pid} reply read$`));
    expect(lines[3]).toBe("");
    const [t0, t1, t2] = lines.slice(0, 3).map((l) => Number(l.split(" ")[0]));
    expect(t0).toBeLessThanOrEqual(t1 ?? 0);
    expect(t1).toBeLessThanOrEqual(t2 ?? 0);
    expect(Math.abs((t0 ?? 0) - Date.now())).toBeLessThan(600_000);
  });

  it("writes nothing without MU_SSH_TIMING, and never fails on a file it cannot write", () => {
    expect(run({})).toMatchObject({ status: 0, stderr: "" });
    expect(run({ MU_SSH_TIMING: join(dir, "no", "such", "dir", "t.log") })).toMatchObject({
      status: 0,
      stderr: "",
    });
  });
});
