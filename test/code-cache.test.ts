import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { tempState } from "./helpers.js";

// Issue 19: the CLI bundle starts from V8's code cache made by the build.
// A cache that no longer fits its bundle must never run: V8 compares the
// source only by length and does not checksum the payload, so these check
// mu's own guard (host/cli/verb-bundle.ts) with a real Node process each.

const root = packageRoot();
const loader = join(root, "dist/host/cli/verb-bundle.js");
const built = join(root, "dist/mu/run-verb.cjs");

let st: ReturnType<typeof tempState>;
let bundle: string;
beforeEach(() => {
  st = tempState();
  // A package of its own, so the copies can be spoiled: the bundle finds
  // package.json, schemas/, the validators and sql.js by walking up.
  const pkg = join(st.dir, "pkg");
  mkdirSync(join(pkg, "dist/mu"), { recursive: true });
  copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
  for (const d of ["schemas", "node_modules", "dist/host"])
    symlinkSync(join(root, d), join(pkg, d));
  bundle = join(pkg, "dist/mu/run-verb.cjs");
  copyFileSync(built, bundle);
  copyFileSync(`${built}.cache`, `${bundle}.cache`);
});
afterEach(() => st.done());

/** `mu plugin list` from the bundle at `file`, and what became of its cache. */
function listFrom(file: string, nodeFlags: string[] = []) {
  const script = [
    `const { loadBundle } = await import(${JSON.stringify(loader)});`,
    `const { cache, verbs } = loadBundle(${JSON.stringify(file)});`,
    `process.stderr.write("cache: " + cache + "\\n");`,
    `await verbs.runVerb(["plugin", "list"]);`,
  ].join("\n");
  const r = spawnSync(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "", ...st.env },
    encoding: "utf8",
  });
  const cache = /^cache: (\w+)$/m.exec(r.stderr)?.[1];
  return { code: r.status, cache, output: r.stdout + r.stderr.replace(/^cache: \w+\n/m, "") };
}

describe("the CLI bundle's code cache", () => {
  it("is taken by V8 as the build made it", () => {
    const r = listFrom(bundle);
    expect([r.code, r.cache]).toEqual([0, "used"]);
    expect(r.output).toContain("no plugins registered");
  });

  it("is left aside for a bundle changed after the build, even at the same length", () => {
    const text = readFileSync(bundle, "utf8");
    const edited = text.replace("no plugins registered;", "no plugins REGISTERED;");
    expect(edited.length).toBe(text.length);
    writeFileSync(bundle, edited);
    const r = listFrom(bundle);
    // The edited text is printed: the source ran, not the old bytecode.
    expect([r.code, r.cache]).toEqual([0, "stale"]);
    expect(r.output).toContain("no plugins REGISTERED");
  });

  it("is left aside when a byte of it is spoiled", () => {
    const cache = readFileSync(`${bundle}.cache`);
    const at = Math.floor(cache.length / 2);
    cache[at] = (cache[at] ?? 0) ^ 0xff;
    writeFileSync(`${bundle}.cache`, cache);
    const r = listFrom(bundle);
    expect([r.code, r.cache]).toEqual([0, "corrupt"]);
    expect(r.output).toContain("no plugins registered");
  });

  it("is left aside when cut short or empty", () => {
    truncateSync(`${bundle}.cache`, 1000);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "corrupt" });
    truncateSync(`${bundle}.cache`, 0);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "corrupt" });
  });

  it("is refused by V8 under other flags, and mu compiles from source", () => {
    const r = listFrom(bundle, ["--no-lazy-feedback-allocation"]);
    expect([r.code, r.cache]).toEqual([0, "rejected"]);
    expect(r.output).toContain("no plugins registered");
  });

  it("is not needed: without one the bundle compiles from source", () => {
    rmSync(`${bundle}.cache`);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "none" });
  });
});
