import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { muBin, muProcess, tempState } from "./helpers.js";

// `mu host exec` as a person drives it: a script from a file or stdin, a
// working directory, and an argv of any length without a stack trace.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
let st: ReturnType<typeof tempState>;
let world: string;
beforeEach(() => {
  st = tempState();
  world = join(st.dir, "world");
  World.create(world, { preset: "link-only", instance: "sim-1" });
  expect(muProcess(["plugin", "add", "sim", "--", sim, "--world", world], st.env).code).toBe(0);
  expect(muProcess(["host", "add", "box", "--plugin", "sim"], st.env).code).toBe(0);
});
afterEach(() => st.done());

const withStdin = (args: string[], input: string) => {
  const r = spawnSync(process.execPath, [muBin, ...args], {
    env: { PATH: process.env.PATH ?? "", ...st.env },
    encoding: "utf8",
    input,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe("mu host exec", () => {
  it("reads the script from --file, in --cwd", () => {
    const file = join(st.dir, "script.sh");
    writeFileSync(file, "pwd | sed 's|.*/||'\necho two lines\n");
    const made = muProcess(["host", "exec", "box", "--", "mkdir -p sub"], st.env);
    expect(made.code).toBe(0);
    const r = muProcess(["host", "exec", "box", "--cwd", "sub", "--file", file], st.env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("sub\ntwo lines\n");
    expect(r.code).toBe(0);
  });

  it("reads the script from stdin with --file -", () => {
    const r = withStdin(["host", "exec", "box", "--file", "-"], "echo from-stdin; exit 3\n");
    expect(r.stdout).toBe("from-stdin\n");
    expect(r.code).toBe(3);
  });

  it("reads the script from stdin when the script is a lone -", () => {
    const r = withStdin(["host", "exec", "box", "--", "-"], "echo lone-dash\n");
    expect(r.stdout).toBe("lone-dash\n");
    expect(r.code).toBe(0);
  });

  it("refuses both a file and words, neither, or a missing file, in one line (exit 2)", () => {
    const file = join(st.dir, "s.sh");
    writeFileSync(file, "true\n");
    for (const args of [
      ["host", "exec", "box", "--file", file, "--", "echo hi"],
      ["host", "exec", "box"],
      ["host", "exec", "box", "--file", join(st.dir, "absent.sh")],
    ]) {
      const r = muProcess(args, st.env);
      expect(r.stderr).toMatch(/^mu: usage: [^\n]+\n$/);
      expect(r.code).toBe(2);
    }
  });

  it("takes ~130,000 script words without overflowing the parser", () => {
    const words = Array.from({ length: 130_000 }, () => "x");
    const r = muProcess(["host", "exec", "box", "--", "true", ...words], st.env);
    // The words join into a script over the sim's 128 KiB maxScriptBytes.
    expect(r.stderr).toMatch(
      /^mu: usage: the script is \d+ bytes; [^\n]*mu host push box[^\n]*\n$/,
    );
    expect(r.code).toBe(2);
  });

  it("parses a short tail after -- as words of their own, host name included", () => {
    // `--` before the host: the host and the script are still two arguments.
    const r = muProcess(["host", "exec", "--", "nohost", "echo hi"], st.env);
    expect(r.stderr).not.toMatch(/too many arguments/);
    expect(r.code).toBe(3);
  });

  it("takes 130,000 words after -- for a verb without a variadic as one usage line", () => {
    const words = Array.from({ length: 130_000 }, () => "x");
    const r = muProcess(["task", "add", "--", ...words], st.env);
    expect(r.stderr).toMatch(/^mu: usage: too many arguments[^\n]*\n$/);
    expect(r.code).toBe(2);
  });
});
