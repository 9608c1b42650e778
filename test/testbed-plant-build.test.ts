import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { PAUSE_POINTS } from "../host/testbed-pause.js";
import { PLANTS } from "../host/testbed-plant.js";
import { muBin, tempState } from "./helpers.js";

// The planted bugs belong to the testbed's build only: the bundle an
// installed mu runs holds none of them, so MU_TESTBED_PLANT changes nothing
// there. tsc's files, which the virtual engine imports, still plant them:
// the same measure run on those shows the plants do change what mu does, so
// a measure that saw nothing could not pass here by being blind.

const root = packageRoot();
const bundle = join(root, "dist/mu/run-verb.cjs");
const sim = join(root, "sim/bin/mu-plugin-sim");

/** Counts the fsyncs of the process it is preloaded into, the plugin's aside. */
const COUNTER = `
const fs = require("node:fs");
const fsp = require("node:fs/promises");
let n = 0;
const syncSync = fs.fsyncSync;
fs.fsyncSync = (fd) => { n++; return syncSync(fd); };
const open = fsp.open;
fsp.open = async (...a) => {
  const fh = await open(...a);
  const sync = fh.sync.bind(fh);
  fh.sync = () => { n++; return sync(); };
  return fh;
};
process.on("exit", () => fs.writeFileSync(process.env.COUNT_FILE, String(n)));
`;

/** mu's code lines, JSDoc and line comments aside. */
function codeLines(text: string): string[] {
  return text.split("\n").filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l));
}

let st: ReturnType<typeof tempState>;
/** A state with the sim registered, copied for each measure. */
let registered: string;
beforeAll(() => {
  st = tempState();
  writeFileSync(join(st.dir, "count.cjs"), COUNTER);
  mkdirSync(join(st.dir, "world"));
  writeFileSync(join(st.dir, "world/world.json"), '{"preset": "link-only", "instance": "sim-1"}');
  registered = join(st.dir, "registered");
  const add = spawnSync(
    process.execPath,
    [muBin, "plugin", "add", "sim", "--", sim, "--world", join(st.dir, "world")],
    {
      env: { PATH: process.env.PATH ?? "", HOME: st.dir, MU_STATE_DIR: registered },
      encoding: "utf8",
    },
  );
  if (add.status !== 0) throw new Error(`plugin add: ${add.stderr}`);
});
afterAll(() => st.done());

/**
 * The fsyncs one `plugin rm` makes (a commit: the temp file, then its
 * directory), on a fresh state with the sim registered: by the built bin,
 * or by tsc's files (the testbed's build).
 */
function fsyncsOfRm(how: "bin" | "tsc", plant?: string): number {
  const state = join(st.dir, `state-${how}-${plant ?? "none"}`);
  cpSync(registered, state, { recursive: true });
  const env = { PATH: process.env.PATH ?? "", HOME: st.dir, MU_STATE_DIR: state };
  const count = join(st.dir, "count");
  const entry =
    how === "bin"
      ? [muBin]
      : [
          "--input-type=module",
          "-e",
          `const m = await import(${JSON.stringify(pathToFileURL(join(root, "dist/host/cli/run-verb.js")).href)}); await m.runVerb(process.argv.slice(1));`,
        ];
  const rm = spawnSync(
    process.execPath,
    ["--require", join(st.dir, "count.cjs"), ...entry, "plugin", "rm", "sim"],
    {
      env: { ...env, COUNT_FILE: count, ...(plant ? { MU_TESTBED_PLANT: plant } : {}) },
      encoding: "utf8",
    },
  );
  expect(rm.stderr).toBe("");
  expect(rm.stdout).toBe("removed sim\n");
  return Number(readFileSync(count, "utf8"));
}

describe("planted bugs in the shipped build", () => {
  it("the bundle holds no plant: no plant's name, no read of MU_TESTBED_PLANT", () => {
    const code = codeLines(readFileSync(bundle, "utf8"));
    for (const p of PLANTS) expect(code.filter((l) => l.includes(p))).toEqual([]);
    expect(code.filter((l) => /\bplanted\b|\.MU_TESTBED_PLANT\b/.test(l))).toEqual([]);
  });

  it("the bundle holds no pause point: no point's name, no pause call, no read of MU_TESTBED_PAUSE", () => {
    const code = codeLines(readFileSync(bundle, "utf8"));
    for (const p of Object.keys(PAUSE_POINTS))
      expect(code.filter((l) => l.includes(p))).toEqual([]);
    expect(code.filter((l) => /\bpauseAt\b|testbed\.pause|\.MU_TESTBED_PAUSE\b/.test(l))).toEqual(
      [],
    );
  });

  it("an installed mu ignores MU_TESTBED_PLANT; the testbed's build does not", () => {
    const clean = fsyncsOfRm("bin");
    expect(clean).toBeGreaterThanOrEqual(2);
    expect(fsyncsOfRm("bin", "no-temp-fsync")).toBe(clean);
    expect(fsyncsOfRm("bin", "no-dir-fsync")).toBe(clean);
    // The same measure sees each plant skip its fsync in tsc's files.
    const tsc = fsyncsOfRm("tsc");
    expect(fsyncsOfRm("tsc", "no-temp-fsync")).toBeLessThan(tsc);
    expect(fsyncsOfRm("tsc", "no-dir-fsync")).toBeLessThan(tsc);
  }, 60_000);
});
