import { describe, expect, it } from "vitest";
import { killAllLocal, runLocal } from "../plugins/ssh/local-run.js";
import { alive } from "./sshd.js";

// How mu-plugin-ssh runs its local helpers (ssh, git): a plain child in the
// plugin's group, its output gathered, cut short by a deadline or by the
// call's abort, and never waited on past such a kill even where a process it
// left holds the pipes (an ssh mux client hands its pipes to the master).

describe("mu-plugin-ssh's local helpers", () => {
  it("a helper that ends: its stdout as bytes, its stderr as text, its code", async () => {
    const r = await runLocal("sh", ["-c", "printf 'out\\377'; echo err >&2; exit 4"]);
    expect(r).toEqual({
      code: 4,
      signal: null,
      stdout: Buffer.from("out\xff", "latin1"),
      stderr: "err\n",
      timedOut: false,
      aborted: false,
    });
  });

  it("stdin is written whole and closed, as text or bytes; none is an empty stdin", async () => {
    expect((await runLocal("cat", [], { stdin: "abc" })).stdout.toString()).toBe("abc");
    expect((await runLocal("cat", [], { stdin: Buffer.from([0, 1, 255]) })).stdout).toEqual(
      Buffer.from([0, 1, 255]),
    );
    const none = await runLocal("cat", []);
    expect([none.code, none.stdout.length]).toEqual([0, 0]);
  });

  it("a helper that does not read its stdin is no failure", async () => {
    const r = await runLocal("true", [], { stdin: Buffer.alloc(4 << 20) });
    expect([r.code, r.timedOut, r.aborted]).toEqual([0, false, false]);
  });

  it("runs with the env and in the directory given, and mu's env when none is given", async () => {
    const r = await runLocal("sh", ["-c", 'printf "%s %s" "$MU_LOCAL_X" "$(pwd -P)"'], {
      env: { PATH: process.env.PATH, MU_LOCAL_X: "given" },
      cwd: "/",
    });
    expect(r.stdout.toString()).toBe("given /");
    process.env.MU_LOCAL_Y = "inherited";
    try {
      const i = await runLocal("sh", ["-c", 'printf %s "$MU_LOCAL_Y"']);
      expect(i.stdout.toString()).toBe("inherited");
    } finally {
      delete process.env.MU_LOCAL_Y;
    }
  });

  it("onStdout sees everything so far after each chunk", async () => {
    const seen: string[] = [];
    await runLocal("sh", ["-c", "echo a; sleep 0.1; echo b"], {
      onStdout: (all) => seen.push(all.toString()),
    });
    // Two chunks, or one on a loaded machine: each call has all that came so far.
    expect(seen.at(-1)).toBe("a\nb\n");
    expect(seen[0]?.startsWith("a\n")).toBe(true);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i]?.startsWith(seen[i - 1] as string)).toBe(true);
  });

  it("stderr is kept up to about 64 KiB", async () => {
    const r = await runLocal("sh", ["-c", "head -c 300000 /dev/zero | tr '\\0' e >&2"]);
    expect(r.stderr.length).toBeGreaterThanOrEqual(65_536);
    expect(r.stderr.length).toBeLessThan(65_536 + 65_537);
  });

  it("a deadline kills the helper and answers at once, though a process it left holds the pipes", async () => {
    const r = await runLocal("sh", ["-c", "sleep 60 & echo $!; exec sleep 60"], {
      timeoutMs: 2000,
    });
    // On a machine too loaded to start the shell within the deadline, no sleep was left.
    const left = Number(r.stdout.toString().trim()) || undefined;
    try {
      expect([r.code, r.signal, r.timedOut, r.aborted]).toEqual([null, "SIGKILL", true, false]);
      if (left) expect(alive(left)).toBe(true);
    } finally {
      if (left) process.kill(left, "SIGKILL");
    }
  });

  it("an abort kills the helper, before it starts or while it runs", async () => {
    const early = new AbortController();
    early.abort();
    const a = await runLocal("sleep", ["60"], { signal: early.signal });
    expect([a.signal, a.timedOut, a.aborted]).toEqual(["SIGKILL", false, true]);
    const late = new AbortController();
    const running = runLocal("sh", ["-c", "sleep 60 & echo $!; exec sleep 60"], {
      signal: late.signal,
      onStdout: () => late.abort(),
    });
    const b = await running;
    const left = Number(b.stdout.toString().trim());
    try {
      expect([b.signal, b.timedOut, b.aborted]).toEqual(["SIGKILL", false, true]);
      expect(left).toBeGreaterThan(0);
    } finally {
      if (left > 0) process.kill(left, "SIGKILL");
    }
  });

  it("a helper that cannot start says why on stderr", async () => {
    const r = await runLocal("mu-no-such-helper", []);
    expect(r.stderr).toMatch(/ENOENT/);
    expect(r.code).not.toBe(0);
  });

  it("killAllLocal kills every helper still running, and none that ended", async () => {
    const ended = await runLocal("true", []);
    expect(ended.code).toBe(0);
    const a = runLocal("sleep", ["60"]);
    const b = runLocal("sh", ["-c", "exec sleep 60"]);
    killAllLocal();
    const [ra, rb] = await Promise.all([a, b]);
    expect([ra.signal, rb.signal]).toEqual(["SIGKILL", "SIGKILL"]);
    expect([ra.timedOut, ra.aborted]).toEqual([false, false]);
  });

  it("a helper that ends by itself is read until its pipes close, a child it left writing included", async () => {
    const r = await runLocal("sh", ["-c", "(sleep 0.3; echo late) & echo early"]);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe("early\nlate\n");
  });

  it("leaves no deadline timer and no abort listener behind", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const ac = new AbortController();
    const removed: string[] = [];
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.removeEventListener = ((type: string, fn: () => void) => {
      removed.push(type);
      remove(type, fn);
    }) as typeof ac.signal.removeEventListener;
    const r = await runLocal("true", [], { timeoutMs: 60_000, signal: ac.signal });
    expect(r.code).toBe(0);
    expect(timers()).toBe(before);
    expect(removed).toEqual(["abort"]);
  });
});
