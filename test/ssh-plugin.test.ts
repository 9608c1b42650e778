import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { schemaDigest } from "../host/protocol/schema.js";
import { EXEC, shLine } from "../plugins/ssh/remote-scripts.js";
import { q } from "../plugins/ssh/ssh.js";
import { muBin, tempState } from "./helpers.js";
import { sshPluginBin, Wire } from "./ssh-wire.js";
import { alive, type Sshd, startSshd } from "./sshd.js";

// mu-plugin-ssh against a real sshd on 127.0.0.1 (test/sshd.ts). This test
// needs sshd and ssh: without them it fails, it does not skip.

let sshd: Sshd;
const wires: Wire[] = [];

function plugin(extra: string[] = []): Wire {
  const w = new Wire(["--dest", "box", "-F", sshd.config, "--home", sshd.home, ...extra]);
  wires.push(w);
  return w;
}

async function exec(w: Wire, script: string, timeoutMs = 20_000, cwd = ".") {
  return w.call("link.exec", { script, cwd, timeoutMs });
}

function readPids(file: string): number[] {
  return readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number);
}

/** Waits for a condition the remote side makes true, with a generous bound. */
async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  sshd = await startSshd();
});

afterAll(async () => {
  for (const w of wires) w.kill();
  const left = sshd ? sshd.killRemote() : [];
  await sshd?.done();
  expect(left, "remote processes the tests left running").toEqual([]);
});

describe("mu-plugin-ssh link", () => {
  it("answers the handshake with the published schema's digest and a link", async () => {
    const w = plugin();
    const r = await w.hello();
    const res = r.result as { schema: string; plugin: { name: string }; seams: { link: unknown } };
    expect(res.schema).toBe(schemaDigest());
    expect(res.plugin.name).toBe("ssh");
    expect(res.seams.link).toMatchObject({ remoteOnTimeout: "stopped", maxScriptBytes: 131072 });
    expect(await w.close()).toBe(0);
  });

  it("passes the script's exit code through: 0, 3, 255 and a signal's 128+n", async () => {
    const w = plugin();
    await w.hello();
    const ok = await exec(w, "echo out; echo err >&2; pwd");
    expect(ok.result).toEqual({
      exitCode: 0,
      stdout: `out\n${sshd.home}\n`,
      stderr: "err\n",
      partial: false,
    });
    expect((await exec(w, "exit 3")).result).toMatchObject({ exitCode: 3 });
    // 255 is ssh's own failure code: the framing keeps it the script's.
    expect((await exec(w, "echo before; exit 255")).result).toMatchObject({
      exitCode: 255,
      stdout: "before\n",
    });
    expect((await exec(w, "kill -KILL $$")).result).toMatchObject({ exitCode: 137 });
    // stdin is /dev/null: a script that reads gets EOF at once.
    expect((await exec(w, "cat; echo done")).result).toMatchObject({ stdout: "done\n" });
    mkdirSync(join(sshd.home, "sub"), { recursive: true });
    expect((await exec(w, "pwd", 20_000, "sub")).result).toMatchObject({
      stdout: `${join(sshd.home, "sub")}\n`,
    });
    const nocwd = await exec(w, "true", 20_000, "no/such/dir");
    expect(nocwd.error?.data.kind).toBe("permanent");
    expect(await w.close()).toBe(0);
  });

  it("runs a script of exactly maxScriptBytes, and refuses one byte more", async () => {
    const w = plugin();
    await w.hello();
    const tail = "echo whole\n";
    const line = `# ${"x".repeat(97)}\n`;
    let script = "";
    while (script.length + line.length + tail.length <= 131072) script += line;
    script += "#".repeat(131072 - script.length - tail.length - 1) + "\n";
    script += tail;
    expect(Buffer.byteLength(script)).toBe(131072);
    expect((await exec(w, script)).result).toMatchObject({ exitCode: 0, stdout: "whole\n" });
    const over = await exec(w, `${script}#`);
    expect(over.error?.data.kind).toBe("permanent");
    await w.close();
  });

  it("the remote wrapper never runs a script that arrived short of its byte count", () => {
    const marker = join(sshd.home, "short.ran");
    const script = `touch ${marker}\n`;
    // Claim one byte more than is sent, as a connection cut mid-send would leave it.
    const line = shLine(EXEC, [sshd.home, String(script.length + 1), "shorttest", ".", "1000"], q);
    const out = execFileSync("ssh", ["-F", sshd.config, "-T", "box", line], {
      input: script,
      encoding: "utf8",
    });
    expect(out).toMatch(/^MU-SSH-SHORT shorttest/m);
    expect(existsSync(marker)).toBe(false);
  });

  it("cuts a huge output so the reply stays under 1 MiB, marked partial", async () => {
    const w = plugin();
    await w.hello();
    const r = await exec(w, "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo tail >&2");
    expect(r.result).toMatchObject({ exitCode: 0, partial: true, stderr: "tail\n" });
    expect(Math.max(...w.lines.map((l) => Buffer.byteLength(l)))).toBeLessThan(1024 * 1024);
    await w.close();
  });

  it("on timeoutMs kills the whole remote tree, a setsid grandchild too, and answers exitCode null", async () => {
    const w = plugin();
    await w.hello();
    const pids = join(sshd.home, "timeout.pids");
    const script = [
      `echo $$ > ${pids}`,
      `sleep 60 & echo $! >> ${pids}`,
      // Leaves the run's process group: only the environment marker finds it.
      `setsid sh -c 'echo $$ >> ${pids}; sleep 60; touch ${pids}.late' &`,
      `while [ "$(wc -l < ${pids})" -lt 3 ]; do sleep 0.05; done`,
      "echo started",
      "sleep 60",
    ].join("\n");
    const r = await exec(w, script, 1_500);
    expect(r.result).toMatchObject({ exitCode: null, stdout: "started\n" });
    const seen = readPids(pids);
    expect(seen).toHaveLength(3);
    for (const pid of seen) expect(alive(pid), `pid ${pid} survived the timeout`).toBe(false);
    expect(existsSync(`${pids}.late`)).toBe(false);
    await w.close();
  });

  it("a dropped connection mid-exec is unknown-outcome, and the run is ended", async () => {
    const w = plugin();
    await w.hello();
    const pids = join(sshd.home, "drop.pids");
    const r = exec(w, `echo $$ > ${pids}; sleep 60`, 60_000);
    await until("the script to start", () => existsSync(pids) && readPids(pids).length === 1);
    sshd.dropConnections();
    const res = await r;
    expect(res.error?.data.kind).toBe("unknown-outcome");
    const [pid] = readPids(pids);
    await until("the dropped run to be killed", () => !alive(pid ?? 0));
    // The next call makes a new connection.
    expect((await exec(w, "echo again")).result).toMatchObject({ exitCode: 0, stdout: "again\n" });
    await w.close();
  });

  it("classes failures: refused is retryable, a bad key or host key is human with a remedy", async () => {
    const refused = new Wire([
      "--dest",
      "root@127.0.0.1",
      "-p",
      "1",
      "-i",
      sshd.key,
      "--home",
      sshd.home,
    ]);
    wires.push(refused);
    await refused.hello();
    const r1 = await exec(refused, "true");
    expect(r1.error?.data.kind).toBe("retryable");
    await refused.close();

    const other = join(sshd.dir, "other_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
    const base = ["--dest", "root@127.0.0.1", "-p", String(sshd.port), "--home", sshd.home];
    const opts = ["-o", `UserKnownHostsFile=${sshd.knownHosts}`, "-o", "IdentitiesOnly=yes"];
    const badKey = new Wire([...base, "-i", other, ...opts, "-F", "/dev/null"]);
    wires.push(badKey);
    await badKey.hello();
    const r2 = await exec(badKey, "true");
    expect(r2.error?.data.kind).toBe("human");
    expect(r2.error?.data.remedy).toMatch(/authorized_keys/);
    await badKey.close();

    const empty = join(sshd.dir, "empty_known_hosts");
    writeFileSync(empty, "");
    const badHost = new Wire([
      ...base,
      "-i",
      sshd.key,
      "-F",
      "/dev/null",
      "-o",
      `UserKnownHostsFile=${empty}`,
      "-o",
      "StrictHostKeyChecking=yes",
    ]);
    wires.push(badHost);
    await badHost.hello();
    const r3 = await badHost.call("link.checkSteps", { phase: "reach" });
    expect(r3.error?.data.kind).toBe("human");
    expect(r3.error?.data.remedy).toMatch(/known_hosts/);
    await badHost.close();
  });

  it("checkSteps: the destination resolves and the remote is reachable, has git and is writable", async () => {
    const w = plugin();
    await w.hello();
    const t = (await w.call("link.checkSteps", { phase: "template" })).result as { ok: unknown }[];
    expect(t.every((s) => s.ok === true)).toBe(true);
    const r = (await w.call("link.checkSteps", { phase: "reach" })).result as { ok: unknown }[];
    expect(r.map((s) => s.ok)).toEqual([true, true, true, true]);
    await w.close();
  });
});

/** The built mu as a real child, run in a checkout. */
function muAt(cwd: string, args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [muBin, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 110_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();
}

describe("mu-plugin-ssh through the real mu", () => {
  let st: ReturnType<typeof tempState>;
  let local: string;

  beforeAll(() => {
    st = tempState();
    local = join(st.dir, "checkout");
    mkdirSync(local);
    git(local, "init", "-q", "-b", "main");
    writeFileSync(join(local, "a.txt"), "one\n");
    git(local, "add", "a.txt");
    git(local, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
    const add = muAt(
      local,
      [
        "plugin",
        "add",
        "ssh",
        "--",
        sshPluginBin,
        "--dest",
        "box",
        "-F",
        sshd.config,
        "--home",
        sshd.home,
      ],
      st.env,
    );
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    expect(
      muAt(local, ["host", "add", "box", "--plugin", "ssh", "--repo", "work/repo"], st.env).code,
    ).toBe(0);
  });

  afterAll(() => st?.done());

  it("mu host exec runs a script and exits with its code", () => {
    const r = muAt(local, ["host", "exec", "box", "--", "echo hi; exit 3"], st.env);
    expect(r.stdout).toBe("hi\n");
    expect(r.code).toBe(3);
  });

  it("mu host push seeds a new repo (rev checked out, detached), is idempotent, and mu host fetch brings HEAD back", () => {
    const rev = git(local, "rev-parse", "HEAD");
    const p1 = muAt(local, ["host", "push", "box"], st.env);
    expect(p1.stderr).toBe("");
    expect(p1.code).toBe(0);
    const remote = join(sshd.home, "work/repo");
    expect(git(remote, "rev-parse", "HEAD")).toBe(rev);
    expect(git(remote, "rev-parse", `refs/mu/pushed/${rev}`)).toBe(rev);
    expect(readFileSync(join(remote, "a.txt"), "utf8")).toBe("one\n");
    // Again: the repo already holds it and is left as it is.
    expect(muAt(local, ["host", "push", "box"], st.env).code).toBe(0);
    expect(git(remote, "rev-parse", "HEAD")).toBe(rev);

    // A commit made on the host comes back into the checkout's FETCH_HEAD.
    writeFileSync(join(remote, "b.txt"), "two\n");
    git(remote, "add", "b.txt");
    git(remote, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two");
    const f = muAt(local, ["host", "fetch", "box"], st.env);
    expect(f.stderr).toBe("");
    expect(f.code).toBe(0);
    expect(git(local, "rev-parse", "FETCH_HEAD")).toBe(git(remote, "rev-parse", "HEAD"));
  });

  it("mu host check passes every step", () => {
    const r = muAt(local, ["host", "check", "box"], st.env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ssh:login/);
  });
});

describe("mu-plugin-ssh when things go away", () => {
  it("stdin EOF mid-exec: the plugin ends the run and its whole group is gone within 5 s", async () => {
    const w = plugin();
    await w.hello();
    const pids = join(sshd.home, "eof.pids");
    void exec(w, `echo $$ > ${pids}; sleep 60`, 60_000);
    await until("the script to start", () => existsSync(pids) && readPids(pids).length === 1);
    // The 5 s bound itself is the contract suite's eof check; here, that it ends at all.
    w.child.stdin?.end();
    expect(await w.exited).toBe(0);
    await until("the plugin's group to empty", () => !w.groupAlive());
    const [pid] = readPids(pids);
    await until("the remote run to end", () => !alive(pid ?? 0));
  });

  it("sshd stopped mid-call: unknown-outcome, and no local process is left", async () => {
    const w = plugin();
    await w.hello();
    const pids = join(sshd.home, "stop.pids");
    const r = exec(w, `echo $$ > ${pids}; sleep 60`, 60_000);
    await until("the script to start", () => existsSync(pids) && readPids(pids).length === 1);
    await sshd.stop();
    const res = await r;
    expect(res.error?.data.kind).toBe("unknown-outcome");
    // With the machine unreachable a new call is refused as retryable.
    expect((await exec(w, "true")).error?.data.kind).toBe("retryable");
    await w.close();
    await until("the plugin's group to empty", () => !w.groupAlive());
    // The "remote" run is the machine's own business now; the suite cleans it up.
    sshd.killRemote();
    await sshd.start();
  });
});

const fakeHarness = join(packageRoot(), "test/fixtures/fake-harness");

describe("mu-plugin-ssh job and channel (fake one-shot harness)", () => {
  function agentPlugin(): Wire {
    return plugin(["--harness", `sh ${fakeHarness} --resume {session} -p`]);
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

    expect((await w.call("job.stop", { key })).result).toBeNull();
    expect((await w.call("job.status")).result).toEqual({ state: "ended", exit: null });
    expect((await w.call("job.stop", { key })).result).toBeNull();
    expect((await w.call("job.lookup", { key, fence: true })).result).toMatchObject({ found: {} });
    await w.close();
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
    await w.close();
  });
});

describe("mu-plugin-ssh agents through the real mu (sim mux, fake harness)", () => {
  let st: ReturnType<typeof tempState>;
  let local: string;
  let env: Record<string, string>;

  beforeAll(() => {
    st = tempState();
    env = { ...st.env, MU_MUX: "sim" };
    local = join(st.dir, "checkout");
    mkdirSync(local);
    git(local, "init", "-q", "-b", "main");
    writeFileSync(join(local, "a.txt"), "one\n");
    git(local, "add", "a.txt");
    git(local, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
    const argv = [
      sshPluginBin,
      "--dest",
      "box",
      "-F",
      sshd.config,
      "--home",
      sshd.home,
      "--harness",
      `sh ${fakeHarness} --resume {session} -p`,
    ];
    const add = muAt(local, ["plugin", "add", "ssh", "--", ...argv], env);
    expect(add.stderr).toBe("");
    expect(
      muAt(local, ["host", "add", "box", "--plugin", "ssh", "--repo", "agents/repo"], env).code,
    ).toBe(0);
    expect(muAt(local, ["host", "push", "box"], env).code).toBe(0);
  });

  afterAll(() => st?.done());

  it("mu plugin check ssh --seam link --seam job --seam channel passes (the issue's acceptance check)", () => {
    const r = muAt(
      local,
      [
        "plugin",
        "check",
        "ssh",
        "--seam",
        "link",
        "--seam",
        "job",
        "--seam",
        "channel",
        "--repeat",
        "2",
      ],
      env,
    );
    expect(r.stdout).not.toMatch(/FAIL/);
    expect(r.code).toBe(0);
  });

  it("spawn --send, wait, read, check, close", () => {
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
    const s2 = muAt(local, ["agent", "send", "a", "and test it"], env);
    expect(s2.code).toBe(0);
    expect(muAt(local, ["wait", "a", "--timeout", "60"], env).stdout).toMatch(
      /runs=2: answer to: and test it/,
    );
    const cl = muAt(local, ["agent", "close", "a"], env);
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
    expect(git(local, "rev-parse", "FETCH_HEAD")).toBe(git(local, "rev-parse", "HEAD"));
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
});
