import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muBin, tempState } from "./helpers.js";

// A shell left in a directory that was removed (an agent's worktree after a
// close, a temp dir) is where people run mu next. Reading the process's
// directory there throws, so mu must not read it unless a verb needs it:
// review found every verb exiting 5 ("a bug in mu") after the directory
// became a port read at start-up.

let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

/** mu run from a directory removed just before. */
function muInRemovedDir(args: string[]) {
  const gone = join(state.dir, "gone");
  mkdirSync(gone);
  const quoted = args.map((a) => `'${a}'`).join(" ");
  const r = spawnSync(
    "/bin/sh",
    ["-c", `cd '${gone}' && rmdir '${gone}' && exec '${process.execPath}' '${muBin}' ${quoted}`],
    { env: { PATH: process.env.PATH ?? "", ...state.env }, encoding: "utf8" },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("mu run from a removed directory", () => {
  it("answers --help, state and plugin list", () => {
    for (const args of [["--help"], ["state"], ["plugin", "list"]]) {
      const r = muInRemovedDir(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
  });

  it("starts a plugin there (the plugin inherits the same directory)", () => {
    const world = join(state.dir, "world");
    mkdirSync(world);
    writeFileSync(
      join(world, "world.json"),
      JSON.stringify({ preset: "link-only", instance: "sim-1" }),
    );
    const sim = join(packageRoot(), "sim", "bin", "mu-plugin-sim");
    const r = muInRemovedDir(["plugin", "add", "sim", "--", sim, "--world", world]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^registered sim /);
  });
});
