import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { muBin, simBoxState, type tempState } from "./helpers.js";

// A script file a person names may never end (/dev/zero, a pipe fed
// forever): mu reads only one byte past the most it could send, refuses in
// one line, and its memory stays small throughout.

/** Far above what a bounded read needs (about 1 MiB), far below an endless one. */
const RSS_CEILING_KB = 400 * 1024;
const DEADLINE_MS = 30_000;

let st: ReturnType<typeof tempState>;
beforeEach(() => {
  st = simBoxState();
});
afterEach(() => st.done());

function rssKb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Runs mu, killing it (and failing) if it outgrows the ceiling or the deadline. */
async function watched(args: string[], stdin: "ignore" | number) {
  const child = spawn(process.execPath, [muBin, ...args], {
    env: { PATH: process.env.PATH ?? "", ...st.env },
    stdio: [stdin, "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c;
  });
  let peakKb = 0;
  let killedFor: string | undefined;
  const poll = setInterval(() => {
    peakKb = Math.max(peakKb, rssKb(child.pid as number));
    if (peakKb > RSS_CEILING_KB && !killedFor) {
      killedFor = `it grew past ${RSS_CEILING_KB} kB`;
      child.kill("SIGKILL");
    }
  }, 50);
  const deadline = setTimeout(() => {
    killedFor ??= `it ran past ${DEADLINE_MS} ms`;
    child.kill("SIGKILL");
  }, DEADLINE_MS);
  const code = await new Promise<number | null>((r) => child.on("close", r));
  clearInterval(poll);
  clearTimeout(deadline);
  return { code, stderr, killedFor, peakKb };
}

describe("mu host exec on endless input", () => {
  it("--file /dev/zero is refused in one line (exit 2) after a bounded read", async () => {
    const r = await watched(["host", "exec", "box", "--file", "/dev/zero"], "ignore");
    expect(r.killedFor).toBeUndefined();
    expect(r.stderr).toMatch(
      /^mu: usage: --file \/dev\/zero holds more than 1048576 bytes, the most a script sent to a plugin can be; [^\n]+\n$/,
    );
    expect(r.code).toBe(2);
  }, 60_000);

  it("--file - with /dev/zero on stdin is refused the same way", async () => {
    const fd = openSync("/dev/zero", "r");
    try {
      const r = await watched(["host", "exec", "box", "--file", "-"], fd);
      expect(r.killedFor).toBeUndefined();
      expect(r.stderr).toMatch(/^mu: usage: stdin holds more than 1048576 bytes, [^\n]+\n$/);
      expect(r.code).toBe(2);
    } finally {
      closeSync(fd);
    }
  }, 60_000);
});
