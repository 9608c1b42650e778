import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { linkGitTimeout } from "../host/contract/link-git-timeout.js";
import type { Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import { type Exec, failure, sh } from "./fake-provider.js";

// link.git-timeout in-process: link.exec runs under the real shell in a temp
// login directory, so the check's named pipe and its clean-up are real;
// link.fetch and link.push are modelled per case, and one case runs a real
// git against the pipe to prove it blocks until the plugin's limit. The
// same check against plugins on the wire (git-no-timeout) is in
// test/contract-fixtures.test.ts.

const PLACE = { target: { host: { name: CHECK_HOST } }, label: "on box" };
const BOTH = { fetch: true, push: true };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Git = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/** A link plugin whose link.exec is the real shell and whose fetch and push answer as `git` does. */
function plugin(git: Git, exec?: (script: string, dir: string) => Exec) {
  const dir = mkdtempSync(join(tmpdir(), "mu-git-timeout-"));
  dirs.push(dir);
  const calls: { method: string; params: Record<string, unknown> }[] = [];
  // Not zero: a time counted from the clock's zero rather than the send shows.
  let clock = 5000;
  const s = {
    now: () => clock,
    call: async (method: string, params: Record<string, unknown>) => {
      calls.push({ method, params });
      if (method === "link.exec") return (exec ?? sh)(params.script as string, dir);
      // Both calls are sent before either answers; each answer comes 2.1 s after the sends.
      const r = await git(method, params).finally(() => {
        clock = 5000 + 2100;
      });
      return r;
    },
  } as unknown as Session;
  return { s, dir, calls };
}

const NULL = async () => ({ exitCode: null, stdout: "", stderr: "" });

describe("link.git-timeout", () => {
  it("passes fetch and push that each answer exitCode null, sent against a stuck repository with the short limit", async () => {
    const p = plugin(NULL);
    const out = await linkGitTimeout(p.s, PLACE, BOTH, "r1-g");
    expect(out.detail).toBe(
      "on box: against a repository that never answers, under timeoutMs 2000, link.fetch after 2100 ms and link.push after 2100 ms answered in time",
    );
    const fetch = p.calls.find((c) => c.method === "link.fetch");
    const push = p.calls.find((c) => c.method === "link.push");
    const stuck = join(p.dir, ".mu-check-r1-g/stuck");
    expect(fetch?.params).toEqual({
      target: PLACE.target,
      remoteCwd: stuck,
      localRepo: push?.params.localRepo,
      timeoutMs: 2000,
    });
    expect(push?.params).toMatchObject({
      target: PLACE.target,
      remoteRepo: stuck,
      timeoutMs: 2000,
    });
    expect(push?.params.rev).toMatch(/^[0-9a-f]{40}$/);
    // named as the check's own, so a run cut short leaves it findable
    expect(basename(`${push?.params.localRepo}`)).toMatch(/^mu-check-/);
    // the local repository is the check's own temp directory, gone once it answered
    expect(existsSync(`${push?.params.localRepo}`)).toBe(false);
    // the pipe is opened once both answered, then the scratch directory goes
    expect(p.calls.map((c) => c.method).slice(-2)).toEqual(["link.exec", "link.exec"]);
    expect(p.calls.at(-2)?.params.script).toMatch(/exec 3<>/);
    expect(existsSync(join(p.dir, ".mu-check-r1-g"))).toBe(false);
  });

  it("tries only what the link declares", async () => {
    const p = plugin(NULL);
    const out = await linkGitTimeout(p.s, PLACE, { fetch: true, push: false }, "r1-g");
    expect(out.detail).toMatch(/under timeoutMs 2000, link\.fetch after 2100 ms answered in time$/);
    expect(p.calls.filter((c) => c.method !== "link.exec").map((c) => c.method)).toEqual([
      "link.fetch",
    ]);
    const q = plugin(NULL);
    await linkGitTimeout(q.s, PLACE, { fetch: false, push: true }, "r1-g");
    expect(q.calls.filter((c) => c.method !== "link.exec").map((c) => c.method)).toEqual([
      "link.push",
    ]);
  });

  it("makes the stuck repository as a working tree whose .git/HEAD is a named pipe", async () => {
    let seen = "";
    const p = plugin(async (_m, params) => {
      const stuck = (params.remoteCwd ?? params.remoteRepo) as string;
      seen = sh(
        `test -p .git/HEAD && test -d .git/objects && test -d .git/refs && echo fifo`,
        stuck,
      ).stdout;
      return { exitCode: null, stdout: "", stderr: "" };
    });
    await linkGitTimeout(p.s, PLACE, { fetch: true, push: false }, "r1-g");
    expect(seen).toBe("fifo\n");
  });

  it("fails a fetch answered with an exit code, showing the answer, and still cleans up", async () => {
    const p = plugin(async (m) =>
      m === "link.fetch" ? { exitCode: 128, stdout: "", stderr: "fatal" } : NULL(),
    );
    const f = await failure(linkGitTimeout(p.s, PLACE, BOTH, "r1-g"));
    expect(f.detail).toBe(
      "link.fetch of a repository that never answers, under timeoutMs 2000, answered exitCode 128 after 2100 ms, not exitCode null",
    );
    expect(f.evidence).toEqual(['{"exitCode":128,"stderr":"fatal","stdout":""}']);
    expect(p.calls.some((c) => /exec 3<>/.test(`${c.params.script}`))).toBe(true);
    expect(existsSync(join(p.dir, ".mu-check-r1-g"))).toBe(false);
  });

  it("fails a fetch answered with an error: only a push may answer one", async () => {
    const p = plugin(async (m) => {
      if (m === "link.fetch") throw new ErrorReply("link.fetch", "retryable", "timed out");
      return NULL();
    });
    const f = await failure(linkGitTimeout(p.s, PLACE, BOTH, "r1-g"));
    expect(f.detail).toBe(
      "link.fetch of a repository that never answers, under timeoutMs 2000: link.fetch answered an error (retryable): timed out",
    );
    expect(f.evidence).toEqual(["link.fetch answered an error (retryable): timed out"]);
  });

  it("passes a push answered with an error once its limit passed", async () => {
    const p = plugin(async (m) => {
      if (m === "link.push") throw new ErrorReply("link.push", "retryable", "timed out");
      return NULL();
    });
    const out = await linkGitTimeout(p.s, PLACE, BOTH, "r1-g");
    expect(out.detail).toMatch(
      /link\.fetch after 2100 ms and link\.push after 2100 ms answered in time$/,
    );
  });

  it("fails a push that gets no answer at all", async () => {
    const p = plugin(async (m) => {
      if (m === "link.push") throw new Error("no answer within 7000 ms");
      return NULL();
    });
    const f = await failure(linkGitTimeout(p.s, PLACE, BOTH, "r1-g"));
    expect(f.detail).toBe(
      "link.push of a repository that never answers, under timeoutMs 2000: no answer within 7000 ms",
    );
  });

  it("fails where a named pipe cannot be made, and sends no fetch or push", async () => {
    const p = plugin(NULL, (script, dir) =>
      script.includes("mkfifo")
        ? { exitCode: 127, stdout: "", stderr: "mkfifo: not found" }
        : sh(script, dir),
    );
    const f = await failure(linkGitTimeout(p.s, PLACE, BOTH, "r1-g"));
    expect(f.detail).toBe("a script that makes a named pipe with mkfifo failed");
    expect(f.evidence).toEqual(['{"exitCode":127,"stderr":"mkfifo: not found","stdout":""}']);
    expect(p.calls.every((c) => c.method === "link.exec")).toBe(true);
    expect(existsSync(join(p.dir, ".mu-check-r1-g"))).toBe(false);
  });

  it("a real git against the stuck repository blocks until the limit, and the pipe's opening frees it", async () => {
    let git: ReturnType<typeof spawn> | undefined;
    let ended: Promise<number | null> | undefined;
    const p = plugin(async (_m, params) => {
      git = spawn("git", ["ls-remote", params.remoteCwd as string], { stdio: "ignore" });
      ended = new Promise((r) => git?.on("exit", (code) => r(code)));
      const limit = new Promise((r) => setTimeout(() => r("limit"), 2000));
      const first = await Promise.race([ended.then(() => "ended"), limit]);
      return { exitCode: first === "limit" ? null : 0, stdout: "", stderr: "" };
    });
    const out = await linkGitTimeout(p.s, PLACE, { fetch: true, push: false }, "r1-g");
    expect(out.result).toBe("pass");
    // Never killed by the check: its opening of the pipe is what ends it. A
    // git still blocked long after is this test's own child, killed here.
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise((r) => {
      timer = setTimeout(() => r("still blocked"), 20_000);
    });
    const end = await Promise.race([ended, stuck]);
    clearTimeout(timer);
    if (end === "still blocked") git?.kill("SIGKILL");
    expect(end).not.toBe("still blocked");
    expect(end).not.toBeNull();
  }, 60_000);

  it("fails a push it could not make a local commit for, and sends nothing", async () => {
    const p = plugin(NULL);
    const was = process.env.GIT_AUTHOR_DATE;
    // git refuses a commit with a date it cannot read
    process.env.GIT_AUTHOR_DATE = "not a date";
    try {
      const f = await failure(linkGitTimeout(p.s, PLACE, BOTH, "r1-g"));
      expect(f.detail).toBe(
        "the check could not make a local commit to push, so the push was not tried",
      );
      expect(f.evidence).toEqual(["git commit --allow-empty in a temporary repository failed"]);
    } finally {
      if (was === undefined) delete process.env.GIT_AUTHOR_DATE;
      else process.env.GIT_AUTHOR_DATE = was;
    }
    expect(p.calls.every((c) => c.method === "link.exec")).toBe(true);
    expect(existsSync(join(p.dir, ".mu-check-r1-g"))).toBe(false);
  });
});
