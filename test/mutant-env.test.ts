import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// The real part of `npm run mutate` names the active mutant in the runner's
// environment. The runner must hand it to the mu processes it starts and keep
// it out of its own modules, which judge what those processes did.
describe("the runner's mutant variable", () => {
  it("leaves the runner's own environment and goes to each process it starts", () => {
    const mod = pathToFileURL(join(packageRoot(), "dist", "sim", "runner", "mutant-env.js")).href;
    const probe = `
      const { mutantEnv } = await import(${JSON.stringify(mod)});
      const own = process.env.__STRYKER_ACTIVE_MUTANT__ ?? null;
      process.stdout.write(JSON.stringify({ own, given: mutantEnv() }));
    `;
    const env = { PATH: process.env.PATH ?? "", __STRYKER_ACTIVE_MUTANT__: "17" };
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
      env,
      encoding: "utf8",
    });
    expect(JSON.parse(r.stdout)).toEqual({ own: null, given: { __STRYKER_ACTIVE_MUTANT__: "17" } });
  });

  it("is taken out before any of mu's modules load: the runner's first import", () => {
    // ES modules run in the order they are imported, so the first import runs first.
    const main = readFileSync(join(packageRoot(), "sim", "runner", "main.ts"), "utf8");
    expect(main.match(/^import .*$/m)?.[0]).toBe('import "./mutant-env.js";');
  });

  it("is dropped by the sim's launcher before the sim loads: the world is the judge's too", () => {
    // mu hands its environment on to the plugins it starts; the sim runs mu's
    // schema and process-scan modules, so it would run the mutant as well.
    const launcher = readFileSync(join(packageRoot(), "sim", "bin", "mu-plugin-sim"), "utf8");
    const dropped = launcher.indexOf("delete process.env.__STRYKER_ACTIVE_MUTANT__;");
    expect(dropped).toBeGreaterThan(0);
    expect(dropped).toBeLessThan(launcher.indexOf("await import("));
  });
});
