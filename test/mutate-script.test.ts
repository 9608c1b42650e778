import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// `npm run mutate` refuses before Stryker starts, from a copy of the script
// in a checkout of its own (the script works from its own directory's parent).

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mu-mutate-"));
  mkdirSync(join(root, "scripts"));
  copyFileSync(join(packageRoot(), "scripts", "mutate.mjs"), join(root, "scripts", "mutate.mjs"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const mutate = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, "scripts", "mutate.mjs"), ...args], { encoding: "utf8" });

describe("npm run mutate", () => {
  it("refuses a part it does not have", () => {
    const r = mutate("--part", "nope");
    expect([r.status, r.stderr]).toEqual([
      2,
      "mutate: --part takes virtual, real, help, tests or contract\n",
    ]);
  });

  it("refuses to start while another run's sandbox is in the checkout", () => {
    mkdirSync(join(root, ".stryker-tmp", "sandbox-abc"), { recursive: true });
    const r = mutate("--part", "help");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^mutate: another mutation run is using this checkout/);
  });
});
