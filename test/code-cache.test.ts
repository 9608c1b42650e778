import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crc32 } from "../host/checksum.js";
import { packCache } from "../host/cli/verb-bundle.js";
import { packageRoot } from "../host/package-root.js";
import { mutantEnv, nodeScript, tempState } from "./helpers.js";

// The CLI bundle starts from V8's code cache made by the build.
// A cache that no longer fits its bundle must never run: V8 compares the
// source only by length and does not checksum the payload, so these check
// mu's own guard (host/cli/verb-bundle.ts) with a real Node process each.

const root = packageRoot();
const loader = join(root, "dist/host/cli/verb-bundle.js");
const built = join(root, "dist/mu/run-verb.cjs");
const schemaFile = "schemas/plugin-protocol-v1.json";

let st: ReturnType<typeof tempState>;
let bundle: string;
beforeEach(() => {
  st = tempState();
  // A package of its own, so the copies can be spoiled: the bundle finds
  // package.json, schemas/, the validators and sql.js by walking up.
  const pkg = join(st.dir, "pkg");
  mkdirSync(join(pkg, "dist/mu"), { recursive: true });
  copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
  mkdirSync(join(pkg, "schemas"));
  copyFileSync(join(root, schemaFile), join(pkg, schemaFile));
  for (const d of ["node_modules", "dist/host"]) symlinkSync(join(root, d), join(pkg, d));
  bundle = join(pkg, "dist/mu/run-verb.cjs");
  copyFileSync(built, bundle);
  copyFileSync(`${built}.cache`, `${bundle}.cache`);
});
afterEach(() => st.done());

/** `mu plugin list` (or args) from the bundle at `file`, and what became of its cache. */
function listFrom(
  file: string,
  nodeFlags: string[] = [],
  args = ["plugin", "list"],
  useCache = true,
) {
  const script = [
    `const { loadBundle } = await import(${JSON.stringify(loader)});`,
    `const { cache, verbs } = loadBundle(${JSON.stringify(file)}, ${useCache});`,
    `process.stderr.write("cache: " + cache + "\\n");`,
    `await verbs.runVerb(${JSON.stringify(args)});`,
  ].join("\n");
  const r = nodeScript(script, st.env, { nodeFlags });
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

  it("is what packing the build's payload again makes, byte for byte", () => {
    const cache = readFileSync(`${bundle}.cache`);
    const again = packCache(readFileSync(bundle), cache.subarray(12));
    expect(again.equals(cache)).toBe(true);
    expect(again.toString("latin1", 0, 4)).toBe("muC1");
  });

  it("is left aside when it is a header with no payload, checksums and all", () => {
    const head = Buffer.from(readFileSync(`${bundle}.cache`).subarray(0, 12));
    head.writeUInt32LE(crc32(new Uint8Array(0)) ?? 0, 8);
    writeFileSync(`${bundle}.cache`, head);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "corrupt" });
  });

  it("is left aside when its first bytes are not mu's, whatever its checksums say", () => {
    const cache = readFileSync(`${bundle}.cache`);
    cache.write("xxxx", 0, "latin1");
    writeFileSync(`${bundle}.cache`, cache);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "corrupt" });
  });

  it("is not read when the build asks for none, as it does to make one", () => {
    expect(listFrom(bundle, [], ["plugin", "list"], false)).toMatchObject({
      code: 0,
      cache: "none",
    });
  });

  it("is not needed: without one the bundle compiles from source", () => {
    rmSync(`${bundle}.cache`);
    expect(listFrom(bundle)).toMatchObject({ code: 0, cache: "none" });
  });
});

// The schema digest comes from the build's validator index while the schema
// file is the one it was made from (same length and CRC-32), which spares a
// plugin-calling verb loading node:crypto; any other file is hashed.
describe("the schema digest a verb names", () => {
  const sha256 = (path: string) =>
    `sha256:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;

  it("is the build's for the file it was made from", () => {
    const r = listFrom(bundle, [], ["plugin", "schema", "--digest"]);
    expect(r.code).toBe(0);
    expect(r.output.trim()).toBe(sha256(join(root, schemaFile)));
  });

  it("is the file's own once the file changed, even at the same length", () => {
    const file = join(st.dir, "pkg", schemaFile);
    const text = readFileSync(file, "utf8");
    const edited = text.replace('"description"', '"Description"');
    expect(edited.length).toBe(text.length);
    writeFileSync(file, edited);
    const r = listFrom(bundle, [], ["plugin", "schema", "--digest"]);
    expect(r.code).toBe(0);
    expect(r.output.trim()).toBe(sha256(file));
    expect(r.output.trim()).not.toBe(sha256(join(root, schemaFile)));
  });
});

describe("sql.js's wasm beside the bundle", () => {
  it("is the installed package's, byte for byte: the bundle holds that package's JavaScript half", () => {
    const pkg = createRequire(join(root, "package.json")).resolve("sql.js/dist/sql-wasm.wasm");
    expect(readFileSync(join(root, "dist/mu/sql-wasm.wasm")).equals(readFileSync(pkg))).toBe(true);
  });
});

// The bin requires the bundle's CommonJS loader itself (host/cli/mu.cts), so
// a broken build must still end in the one line every failure gets.
describe("the bin", () => {
  /** A copy of the package's bin and its dist/mu, which the test may spoil. */
  function binCopy(): { bin: string; mu: string } {
    const pkg = join(st.dir, "bin-pkg");
    const keep = { recursive: true, preserveTimestamps: true };
    cpSync(join(root, "dist/host"), join(pkg, "dist/host"), keep);
    cpSync(join(root, "dist/mu"), join(pkg, "dist/mu"), keep);
    copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
    cpSync(join(root, "schemas"), join(pkg, "schemas"), { recursive: true });
    symlinkSync(join(root, "node_modules"), join(pkg, "node_modules"));
    return { bin: join(pkg, "dist/host/cli/mu.cjs"), mu: join(pkg, "dist/mu") };
  }
  const run = (bin: string) =>
    spawnSync(process.execPath, [bin, "plugin", "list"], {
      env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...st.env },
      encoding: "utf8",
    });
  const brokenInstall = /^mu: internal: cannot load mu's verbs: [^\n]*; reinstall mu \(npm ci\)\n$/;

  it("runs a verb from its copy of the build", () => {
    const r = run(binCopy().bin);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("no plugins registered");
  });

  it("says one line and exits 5 when the bundle's loader is missing", () => {
    const { bin, mu } = binCopy();
    rmSync(join(mu, "verb-bundle.cjs"));
    const r = run(bin);
    expect(r.status).toBe(5);
    expect(r.stderr).toMatch(brokenInstall);
  });

  // Without the bundle the bin hands over to main.js, which the build
  // pointed at that same bundle: a broken install too, never "a bug in mu".
  it("says one line and exits 5 when the bundle itself is missing", () => {
    const { bin, mu } = binCopy();
    rmSync(join(mu, "run-verb.cjs"));
    const r = run(bin);
    expect([r.status, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toMatch(brokenInstall);
    expect(r.stderr).toContain("ENOENT");
  });

  it("runs a verb from main.js started by hand, through the bundle the build named", () => {
    const { bin } = binCopy();
    const r = run(join(dirname(bin), "main.js"));
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("no plugins registered");
  });

  // A later tsc alone rewrites main.js (no bundle named) and leaves the
  // bundle older than its own files: the bin runs tsc's files through main.js.
  it("runs a verb from tsc's files once a later tsc left the bundle stale", () => {
    const { bin } = binCopy();
    const main = join(dirname(bin), "main.js");
    const text = readFileSync(main, "utf8");
    const named = /const BUNDLE = "[^"]+";/;
    expect(text).toMatch(named);
    writeFileSync(main, text.replace(named, "const BUNDLE = null;"));
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dirname(bin), "run-verb.js"), later, later);
    const r = run(bin);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("no plugins registered");
  });
});
