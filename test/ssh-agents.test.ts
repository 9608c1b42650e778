import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempState } from "./helpers.js";
import {
  git,
  harnessArgs,
  muAt,
  oneCommitCheckout,
  plugin,
  pluginArgv,
  sshd,
  useSshd,
} from "./ssh-kit.js";
import type { Wire } from "./ssh-wire.js";

// mu-plugin-ssh's job and channel seams against a real sshd on 127.0.0.1,
// with a fake one-shot harness: needs sshd and ssh, fails without them.

useSshd();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Every file and directory under dir, relative to it. */
function entriesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

describe("mu-plugin-ssh job and channel (fake one-shot harness)", { timeout: 180_000 }, () => {
  function agentPlugin(): Wire {
    return plugin(harnessArgs);
  }
  const spec = (cwd = ".") => ({
    workstream: "main",
    name: "a",
    harness: "fake",
    role: "full-access",
    cmd: "fake",
    commandSource: "harness",
    cwd,
    env: { FAKE_THINK_S: "0.2" },
  });

  it("start, send, watch settles with the answer, receipt, lastRun, fresh, stop", async () => {
    const w = agentPlugin();
    await w.hello();
    const key = "job-t1";
    w.target = {
      host: { name: "box" },
      job: { kind: "ssh", key },
      agent: { workstream: "main", name: "a", incarnation: 1 },
    };
    const st = await w.call("job.start", { key, spec: spec() });
    expect(st.error).toBeUndefined();
    expect((st.result as { view: { command: string } }).view.command).toMatch(/tail/);
    expect((await w.call("job.status")).result).toEqual({ state: "running" });
    expect((await w.call("job.lookup", { key, fence: true })).result).toMatchObject({ found: {} });
    expect((await w.call("channel.baseline")).result).toEqual({ runs: 0, incarnation: 1 });

    const send = await w.call("channel.send", {
      text: "hello",
      msgId: "m1",
      mode: "followUp",
      force: false,
      firstPrompt: true,
    });
    expect(send.result).toEqual({ channel: "ssh", ack: "confirmed", baseline: 0, msgId: "m1" });
    // The same msgId again is the first reply, not a second turn.
    const again = await w.call("channel.send", {
      text: "hello",
      msgId: "m1",
      mode: "followUp",
      force: false,
      firstPrompt: true,
    });
    expect(again.result).toEqual(send.result);
    const watch = await w.call("channel.watch", { afterRuns: 0 });
    const { watchId } = watch.result as { watchId: string };
    const settled = await w.note(watchId);
    expect(settled.method).toBe("watch/settled");
    expect(settled.params.observation).toMatchObject({
      settled: true,
      runs: 1,
      incarnation: 1,
      lastText: "answer to: hello (session job-t1-1, turn 1)\n",
    });
    expect((await w.call("channel.receipt", { msgId: "m1" })).result).toMatchObject({
      state: "accepted",
      id: "m1",
      runs: 0,
      incarnation: 1,
    });
    expect((await w.call("channel.receipt", { msgId: "nope" })).result).toEqual({
      state: "not-accepted",
      id: "nope",
    });
    expect((await w.call("channel.lastRun", { afterRuns: 0 })).result).toMatchObject({
      runs: 1,
      lastText: expect.stringMatching(/^answer to: hello/),
    });
    const rs = (await w.call("channel.readStates", { targets: ["main/a"] })).result;
    expect(rs).toMatchObject({ "main/a": { state: "idle", runs: 1, incarnation: 1 } });

    // A failing turn settles too, with its error.
    await w.call("channel.send", {
      text: "fail now",
      msgId: "m2",
      mode: "followUp",
      force: true,
      firstPrompt: false,
    });
    const w2 = (await w.call("channel.watch", { afterRuns: 1 })).result as { watchId: string };
    expect((await w.note(w2.watchId)).params.observation).toMatchObject({
      runs: 2,
      lastError: expect.stringMatching(/exited 3: cannot: fail now/),
    });
    // Two turns past afterRuns: a watch or lastRun is of the last settled
    // turn, so its runs and its text are of one turn, as mu's line shows them.
    const behind = (await w.call("channel.watch", { afterRuns: 0 })).result as { watchId: string };
    for (const o of [
      (await w.note(behind.watchId)).params.observation as Record<string, unknown>,
      (await w.call("channel.lastRun", { afterRuns: 0 })).result as Record<string, unknown>,
    ]) {
      expect(o).toMatchObject({ runs: 2, lastError: expect.stringMatching(/cannot: fail now/) });
      expect(String(o.lastText ?? "")).not.toMatch(/answer to: hello/);
    }

    // fresh: a new incarnation whose first turn is the text.
    const fr = await w.call("channel.fresh", { text: "again", msgId: "m3", force: false });
    expect(fr.result).toMatchObject({ baseline: 0 });
    const w3 = (await w.call("channel.watch", { afterRuns: 0, inc: 2 })).result as {
      watchId: string;
    };
    expect((await w.note(w3.watchId)).params.observation).toMatchObject({
      incarnation: 2,
      runs: 1,
      lastText: expect.stringMatching(/session job-t1-2, turn 1/),
    });

    // A job stopped more than a week ago is swept by the next start.
    const old = join(sshd.home, ".mu-plugin-ssh/jobs/job-ancient");
    mkdirSync(old, { recursive: true });
    writeFileSync(join(old, "stopped"), "");
    execFileSync("touch", ["-d", "10 days ago", join(old, "stopped")]);
    expect((await w.call("job.start", { key: "job-t1b", spec: spec() })).error).toBeUndefined();
    expect(existsSync(old)).toBe(false);
    expect((await w.call("job.stop", { key: "job-t1b" })).result).toBeNull();

    expect((await w.call("job.stop", { key })).result).toBeNull();
    // What a person wrote, and what the turns answered, is gone from the remote.
    const left = filesUnder(join(sshd.home, ".mu-plugin-ssh/jobs", key));
    expect(left.length).toBeGreaterThan(0);
    for (const f of left)
      expect(readFileSync(f, "utf8"), f).not.toMatch(/hello|fail now|again|answer to/);
    // A receipt still answers from what is left.
    expect((await w.call("channel.receipt", { msgId: "m1" })).result).toMatchObject({
      state: "accepted",
      runs: 0,
    });
    expect((await w.call("job.status")).result).toEqual({ state: "ended", exit: null });
    expect((await w.call("job.stop", { key })).result).toBeNull();
    expect((await w.call("job.lookup", { key, fence: true })).result).toMatchObject({ found: {} });
    await w.close();
  });

  it("interrupt kills the running turn and queues the text; abort kills the running turn", async () => {
    const w = agentPlugin();
    await w.hello();
    const key = "job-int";
    w.target = {
      host: { name: "box" },
      job: { kind: "ssh", key },
      agent: { workstream: "main", name: "a", incarnation: 1 },
    };
    // The remote is this machine: the harness logs each prompt it was given.
    const logDir = tempState();
    const prompts = join(logDir.dir, "prompts");
    const logged = { ...spec(), env: { ...spec().env, FAKE_PROMPT_LOG: prompts } };
    const ran = () => readFileSync(prompts, "utf8").trimEnd().split("\n");
    expect((await w.call("job.start", { key, spec: logged })).error).toBeUndefined();
    const busy = async () => {
      for (;;) {
        const r = (await w.call("channel.readStates", { targets: ["main/a"] })).result as Record<
          string,
          { state: string }
        >;
        if (r["main/a"]?.state === "busy") return;
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    await w.call("channel.send", {
      text: "slow one",
      msgId: "s1",
      mode: "followUp",
      force: false,
      firstPrompt: true,
    });
    await busy();
    // The interrupt's text is slow too, so the killed turn stays the last
    // settled one while the next runs: an observation is of the last settled turn.
    const int = await w.call("channel.interrupt", {
      text: "slow two",
      msgId: "i1",
      timeoutMs: 10_000,
    });
    expect(int.result).toMatchObject({ wasBusy: true, msgId: "i1", runs: 1, incarnation: 1 });
    const wa = (await w.call("channel.watch", { afterRuns: 0 })).result as { watchId: string };
    // The killed turn reads as interrupted, not as a harness that failed with 137.
    expect((await w.note(wa.watchId)).params.observation).toMatchObject({
      runs: 1,
      lastError: expect.stringMatching(/^interrupted: /),
    });
    await busy();
    const ab = await w.call("channel.abort", { timeoutMs: 20_000 });
    expect(ab.result).toEqual({
      before: "busy",
      after: "idle",
      settled: true,
      aborted: true,
      pending: false,
    });
    expect((await w.call("channel.lastRun", { afterRuns: 1 })).result).toMatchObject({
      runs: 2,
      lastError: expect.stringMatching(/^aborted: mu agent abort/),
    });
    // The turn the abort killed was the interrupt's text, run next.
    expect(ran()).toEqual(["slow one", "slow two"]);
    // After both, a plain send is answered as usual.
    await w.call("channel.send", {
      text: "quick",
      msgId: "s2",
      mode: "followUp",
      force: false,
      firstPrompt: false,
    });
    const wq = (await w.call("channel.watch", { afterRuns: 2 })).result as { watchId: string };
    expect((await w.note(wq.watchId)).params.observation).toMatchObject({
      runs: 3,
      lastText: expect.stringMatching(/^answer to: quick/),
    });
    expect(ran()).toEqual(["slow one", "slow two", "quick"]);
    expect((await w.call("job.stop", { key })).result).toBeNull();
    await w.close();
    logDir.done();
  });

  it("job.checkSteps looks for the harness's tool on the remote, inside an sh -c wrapper too", async () => {
    const missing = plugin(["--harness", "sh -c 'if true; then exec no-such-agent-cli -p; fi'"]);
    await missing.hello();
    expect((await missing.call("job.checkSteps", { phase: "agent" })).result).toMatchObject([
      { step: "harness", ok: false },
    ]);
    await missing.close();
    const present = agentPlugin();
    await present.hello();
    expect((await present.call("job.checkSteps", { phase: "agent" })).result).toMatchObject([
      { step: "harness", ok: true },
    ]);
    await present.close();
  });

  it("a fenced lookup of an unused key answers none, and a late start with that key is refused", async () => {
    const w = agentPlugin();
    await w.hello();
    expect((await w.call("job.lookup", { key: "job-late", fence: false })).result).toEqual({
      none: true,
    });
    expect((await w.call("job.lookup", { key: "job-late", fence: true })).result).toEqual({
      none: true,
    });
    const late = await w.call("job.start", { key: "job-late", spec: spec() });
    expect(late.error?.data.kind).toBe("permanent");
    // A start that died before writing its pid (its directory half made):
    // pending until a fenced lookup settles it as none for good.
    const half = join(sshd.home, ".mu-plugin-ssh/jobs/job-half");
    mkdirSync(half, { recursive: true });
    writeFileSync(join(half, "env.sh"), "");
    expect((await w.call("job.lookup", { key: "job-half", fence: false })).result).toEqual({
      pending: true,
    });
    expect((await w.call("job.lookup", { key: "job-half", fence: true })).result).toEqual({
      none: true,
    });
    expect((await w.call("job.lookup", { key: "job-half", fence: false })).result).toEqual({
      none: true,
    });
    await w.close();
  });
});

describe("mu-plugin-ssh agents through the real mu (sim mux, fake harness)", {
  timeout: 180_000,
}, () => {
  let st: ReturnType<typeof tempState>;
  let local: string;
  let env: Record<string, string>;

  beforeAll(() => {
    st = tempState();
    env = { ...st.env, MU_MUX: "sim" };
    local = oneCommitCheckout(st.dir);
    const argv = pluginArgv(harnessArgs);
    const add = muAt(local, ["plugin", "add", "ssh", "--", ...argv], env);
    expect(add.stderr).toBe("");
    expect(
      muAt(local, ["host", "add", "box", "--plugin", "ssh", "--repo", "agents/repo"], env).code,
    ).toBe(0);
    expect(muAt(local, ["host", "push", "box"], env).code).toBe(0);
  }, 170_000);

  afterAll(() => st?.done());

  it("mu plugin check ssh --host box --seam link --seam job --seam channel passes, and leaves nothing on the remote", () => {
    const before = new Set(entriesUnder(sshd.home));
    const r = muAt(
      local,
      [
        "plugin",
        "check",
        "ssh",
        "--host",
        "box",
        "--seam",
        "link",
        "--seam",
        "job",
        "--seam",
        "channel",
        "--repeat",
        "1",
      ],
      env,
    );
    expect(r.stdout).not.toMatch(/FAIL|skip\s+link/);
    expect(r.code).toBe(0);
    const deep = [
      ...["job.attach", "job.checkSteps", "channel.turns", "channel.dedupe"],
      ...["channel.receipts", "channel.watch", "channel.controls"],
    ];
    for (const id of deep)
      expect(r.stdout).toMatch(new RegExp(`^ok +${id.replace(".", "\\.")} `, "m"));
    // It honours no --command, so no job of the check's can report its cwd and env.
    expect(r.stdout).toMatch(/^skip +job\.spec +the kind does not honour a command/m);
    expect(r.stdout).toMatch(/^cleaned: removed through link.exec /m);
    // The directories its jobs made in the plugin's state go too, once empty;
    // one the plugin had before the run (earlier tests' jobs) stays.
    const emptied = /^cleaned: and the directories its jobs made, emptied: \S/m;
    if (before.has(join(".mu-plugin-ssh", "jobs"))) expect(r.stdout).not.toMatch(emptied);
    else expect(r.stdout).toMatch(emptied);
    const made = entriesUnder(sshd.home).filter((e) => !before.has(e));
    expect(made, "what the check left in the remote home").toEqual([]);
    expect(r.stdout).not.toMatch(/^left:/m);
  });

  it("mu host check runs the link's steps and the job's harness step", () => {
    const r = muAt(local, ["host", "check", "box"], env);
    expect(r.stdout).toMatch(/ssh:harness/);
    expect(r.code).toBe(0);
  });

  it("spawn --send, wait, read, check, list, reattach, send, close", () => {
    const sp = muAt(local, ["agent", "spawn", "a", "--host", "box", "--send", "build it"], env);
    expect(sp.stderr).toBe("");
    expect(sp.code).toBe(0);
    const msgId = /sent (\S+) to main\/a/.exec(sp.stdout)?.[1] ?? "";
    const w = muAt(local, ["wait", "a", "--timeout", "60"], env);
    expect(w.stdout).toMatch(/settled runs=1: answer to: build it/);
    expect(w.code).toBe(0);
    const rd = muAt(local, ["agent", "read", "a"], env);
    expect(rd.stdout).toMatch(/idle\s+runs=1\s+inc=1/);
    expect(muAt(local, ["agent", "check", "a", msgId], env).code).toBe(0);
    const list = muAt(local, ["agent", "list"], env);
    expect(list.stdout).toMatch(/main\/a\s+box\s+running/);
    // A view that died with its connection names the verb that opens another.
    sshd.dropConnections();
    let listed = "";
    for (let i = 0; i < 40 && !listed.includes("(gone"); i++)
      listed = muAt(local, ["agent", "list"], env).stdout;
    expect(listed).toMatch(/main\/a\s+box\s+running\s+\S+ \(gone: mu agent reattach main\/a\)/);
    // detached: a new view from job.attach on the same row
    const re = muAt(local, ["agent", "reattach", "a"], env);
    expect(re.stderr).toBe("");
    expect(re.code).toBe(0);
    const s2 = muAt(local, ["agent", "send", "a", "and test it"], env);
    expect(s2.code).toBe(0);
    // The wait's sessions: the job's status, then the watch's reading and
    // its wait as one (each session pays the remote shell's start-up files).
    const timing = join(st.dir, "wait-timing");
    expect(
      muAt(local, ["wait", "a", "--timeout", "60"], { ...env, MU_SSH_TIMING: timing }).stdout,
    ).toMatch(/runs=2: answer to: and test it/);
    expect(readFileSync(timing, "utf8").match(/ session start$/gm)).toHaveLength(2);
    const cl = muAt(local, ["agent", "close", "a"], env);
    expect(cl.stderr).toBe("");
    expect(cl.code).toBe(0);
  });

  // Found trying mu over ssh: a send to an agent whose job process had died
  // was taken ("sent … (baseline 0)", exit 0) and would never be run.
  it("a send to an agent whose job died is refused, and close still ends it", () => {
    const sp = muAt(local, ["agent", "spawn", "d", "--host", "box"], env);
    expect(sp.code).toBe(0);
    const key = /\(job (\S+),/.exec(sp.stdout)?.[1] ?? "";
    expect(key).not.toBe("");
    const found = spawnSync(
      "sh",
      ["-c", `grep -lzx "MU_SSH_JOB=${key}" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3`],
      { encoding: "utf8" },
    ).stdout.trim();
    expect(found).not.toBe("");
    for (const pid of found.split("\n")) spawnSync("kill", ["-KILL", pid]);
    const s = muAt(local, ["agent", "send", "d", "anyone there?"], env);
    expect(s.stdout).toBe("");
    expect(s.stderr).toMatch(/the agent's job is not running/);
    expect(s.code).toBe(5);
    const cl = muAt(local, ["agent", "close", "d"], env);
    expect(cl.stderr).toBe("");
    expect(cl.code).toBe(0);
  });

  it("a --worktree spawn and its close with the final collect", () => {
    const sp = muAt(
      local,
      ["agent", "spawn", "t", "--host", "box", "--worktree", "--send", "work in the tree"],
      env,
    );
    expect(sp.stderr).toBe("");
    expect(sp.code).toBe(0);
    expect(muAt(local, ["wait", "t", "--timeout", "60"], env).code).toBe(0);
    const cl = muAt(local, ["agent", "close", "t"], env);
    expect(cl.stderr).toBe("");
    expect(cl.code).toBe(0);
    // The tree's HEAD is pinned under the job's own ref, and named on stdout.
    const ref = /\((refs\/mu\/collected\/main\/t\/job-[0-9a-f]+)\)$/m.exec(cl.stdout)?.[1];
    expect(ref, cl.stdout).toBeDefined();
    expect(git(local, "rev-parse", ref as string)).toBe(git(local, "rev-parse", "HEAD"));
  });

  it("mu SIGKILLed once job.start's intent is durable: the same spawn settles it by job.lookup", () => {
    const crash = muAt(local, ["agent", "spawn", "k", "--host", "box", "--send", "hi"], {
      ...env,
      MU_CRASH_AT: "effect.intent-durable",
    });
    expect(crash.code).toBeNull();
    const again = muAt(local, ["agent", "spawn", "k", "--host", "box", "--send", "hi"], env);
    expect(again.stderr).toMatch(/start\.lookup\.none/);
    expect(again.code).toBe(0);
    expect(muAt(local, ["wait", "k", "--timeout", "60"], env).stdout).toMatch(/answer to: hi/);
    expect(muAt(local, ["agent", "close", "k"], env).code).toBe(0);
  });

  it("mu SIGKILLed once job.start is written: the plugin finishes the start, and the same spawn finds it by job.lookup", () => {
    const crash = muAt(local, ["agent", "spawn", "r", "--host", "box", "--send", "hey"], {
      ...env,
      MU_CRASH_AT: "effect.request-written",
    });
    expect(crash.code).toBeNull();
    const again = muAt(local, ["agent", "spawn", "r", "--host", "box", "--send", "hey"], env);
    expect(again.stderr).toMatch(/start\.lookup\.found/);
    expect(again.code).toBe(0);
    expect(muAt(local, ["wait", "r", "--timeout", "60"], env).stdout).toMatch(/answer to: hey/);
    expect(muAt(local, ["agent", "close", "r"], env).code).toBe(0);
  });
});
