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

describe("the mutation summary's list of modules no run measured", () => {
  it("sets apart the modules of types alone, which Stryker has nothing to mutate in", () => {
    const r = spawnSync(
      process.execPath,
      [
        join(packageRoot(), "scripts", "mutation-summary.mjs"),
        join(packageRoot(), "reports", "mutation-runs", "r23-tests-plant.json"),
        "--unmeasured",
      ],
      { cwd: packageRoot(), encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const unmeasured = r.stdout.slice(r.stdout.indexOf("## Modules no run has measured"));
    expect(unmeasured).toContain(
      "Nothing to mutate (types alone, no code Stryker can change): `host/ports/types.ts`, `host/protocol/declaration.ts`, `host/view/backend.ts`.",
    );
    const listed = unmeasured.slice(0, unmeasured.indexOf("Nothing to mutate"));
    expect(listed).toMatch(/- `host\/view\/` \(\d+, \d+ lines\): .*tmux-mux\.ts/);
    expect(listed).not.toContain("backend.ts");
    expect(listed).not.toContain("testbed-plant.ts");
  });
});
