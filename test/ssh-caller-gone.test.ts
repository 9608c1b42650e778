import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OUTPUT_CAP } from "../plugins/ssh/exec-frame.js";
import { PERL_EXEC } from "../plugins/ssh/perl-run.js";
import { LAUNCH } from "../plugins/ssh/reaper.js";
import { EXEC, STATE } from "../plugins/ssh/remote-scripts.js";

// The remote side of a link.exec. One whose caller is gone before the run starts
// (mu's ssh client killed after the script went out): the wrapper must not
// run the script, nor leave the run's directory behind. Run here as the
// remote shell would run it, with its stdout a pipe nobody reads any more.

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** The wrapper started as the remote shell starts it, for a script of this many bytes. */
function wrapper(root: string, perl: string, script: string, id: string) {
  const args = [
    root,
    String(Buffer.byteLength(script)),
    id,
    root,
    String(OUTPUT_CAP),
    LAUNCH,
    perl,
  ];
  return spawn("sh", ["-c", EXEC, "sh", ...args], { stdio: ["pipe", "pipe", "ignore"] });
}

/** One run of the wrapper, its reader gone before the script arrives; resolves with its exit. */
function runOrphaned(root: string, perl: string): Promise<number | null> {
  const script = `touch '${root}/ran'\n`;
  const child = wrapper(root, perl, script, "r1");
  // Only once the reading end is closed does the script go out: the first
  // line the wrapper writes after that meets a pipe with no reader.
  child.stdout.on("close", () => child.stdin.end(script));
  child.stdout.destroy();
  return new Promise((resolve) => child.on("exit", (code) => resolve(code)));
}

/** One run of the wrapper with its caller there: what it printed. */
function run(root: string, perl: string, script: string): Promise<string> {
  const child = wrapper(root, perl, script, "r2");
  let out = "";
  child.stdout.on("data", (b: Buffer) => {
    out += b.toString();
  });
  child.stdin.end(script);
  return new Promise((resolve) => child.on("close", () => resolve(out)));
}

describe("the remote wrapper of a link.exec", () => {
  it.each([
    ["the sh wrapper", ""],
    ["the perl wrapper", PERL_EXEC],
  ])("%s runs nothing and leaves no run directory", async (_, perl) => {
    const root = mkdtempSync(join(tmpdir(), "mu-caller-gone-"));
    roots.push(root);
    await runOrphaned(root, perl);
    expect(existsSync(join(root, "ran"))).toBe(false);
    const runs = join(root, STATE, "runs");
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });

  it.each([
    ["the sh wrapper", ""],
    ["the perl wrapper", PERL_EXEC],
  ])("%s still starts the script with SIGPIPE at its default", async (_, perl) => {
    const root = mkdtempSync(join(tmpdir(), "mu-caller-gone-"));
    roots.push(root);
    // With SIGPIPE ignored, yes would see EPIPE and complain on stderr;
    // at its default, yes dies quietly when head has read its one byte.
    const out = await run(root, perl, "yes | head -c 1 >/dev/null\n");
    expect(out).toMatch(/^MU-SSH-RESULT r2 0 0 0$/m);
  });
});
