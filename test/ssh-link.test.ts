import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaDigest } from "../host/protocol/schema.js";
import { PERL_EXEC } from "../plugins/ssh/perl-run.js";
import { LAUNCH } from "../plugins/ssh/reaper.js";
import { EXEC, KILL, shLine } from "../plugins/ssh/remote-scripts.js";
import { q } from "../plugins/ssh/ssh.js";
import { tempState } from "./helpers.js";
import {
  exec,
  git,
  muAt,
  oneCommitCheckout,
  plugin,
  pluginArgv,
  readPids,
  sshd,
  track,
  until,
  useSshd,
} from "./ssh-kit.js";
import { Wire } from "./ssh-wire.js";
import { alive } from "./sshd.js";

// mu-plugin-ssh's link against a real sshd on 127.0.0.1: needs sshd and ssh,
// fails without them.

useSshd();

describe("mu-plugin-ssh link", { timeout: 180_000 }, () => {
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
    script += `${"#".repeat(131072 - script.length - tail.length - 1)}\n`;
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

  // The run's holder by what the remote has: perl-run.ts's one process,
  // the sh wrapper with the python3 launcher, or nothing that can hold.
  it.each([
    { has: "perl only", tools: ["perl"], holder: /perl/ },
    { has: "python3 only", tools: ["python3"], holder: /python3/ },
    { has: "neither perl nor python3", tools: [], holder: undefined },
  ])(
    "with $has on the remote, a killed run is held and ended whole, or marked unheld (?)",
    async ({ has, tools, holder }) => {
      const bin = join(sshd.dir, `bin-${has.replace(/ /g, "-")}`);
      mkdirSync(bin, { recursive: true });
      for (const t of [
        ...["sh", "mkdir", "head", "wc", "tr", "rm", "setsid", "cat", "sleep", "grep", "kill"],
        ...["env", "nohup", ...tools],
      ]) {
        const at = spawnSync("sh", ["-c", `command -v ${t}`], { encoding: "utf8" }).stdout.trim();
        if (at.startsWith("/") && !existsSync(join(bin, t))) symlinkSync(at, join(bin, t));
      }
      const ssh = (line: string, input = "") =>
        spawnSync("ssh", ["-F", sshd.config, "-T", "box", `PATH=${bin} ${line}`], {
          input,
          encoding: "utf8",
          timeout: 60_000,
        });
      const id = `held${tools.length}${tools[0]?.[1] ?? ""}`;
      const escapee = join(sshd.dir, `${id}.pid`);
      // Leaves the run's group and marker both: only a holder still has it.
      const script = `env -i setsid nohup sh -c 'echo $$ > ${escapee}; exec sleep 300' >/dev/null 2>&1 &\nsleep 30\n`;
      const run = spawn(
        "ssh",
        [
          "-F",
          sshd.config,
          "-T",
          "box",
          `PATH=${bin} MU_SSH_RUN=${id} ${shLine(EXEC, [sshd.home, String(Buffer.byteLength(script)), id, ".", "1000", LAUNCH, PERL_EXEC], q)}`,
        ],
        { stdio: ["pipe", "ignore", "ignore"] },
      );
      run.stdin?.end(script);
      const dir = join(sshd.home, ".mu-plugin-ssh/runs", id);
      await until("the run to start", () => existsSync(join(dir, "pid")) && existsSync(escapee));
      const pid = Number(readFileSync(escapee, "utf8"));
      if (holder) {
        await until("the run to be held", () => existsSync(join(dir, "reaper")));
        const reaper = readFileSync(join(dir, "reaper"), "utf8").trim();
        expect(readFileSync(`/proc/${reaper}/cmdline`, "utf8")).toMatch(holder);
        const killed = ssh(shLine(KILL, [sshd.home, id, "1000"], q));
        expect(killed.stdout).toMatch(new RegExp(`^MU-SSH-RESULT ${id} - 0 0$`, "m"));
        await until("the escapee to be ended", () => !alive(pid));
      } else {
        expect(existsSync(join(dir, "unheld"))).toBe(true);
        const killed = ssh(shLine(KILL, [sshd.home, id, "1000"], q));
        expect(killed.stdout).toMatch(new RegExp(`^MU-SSH-RESULT ${id} \\? 0 0$`, "m"));
        // Nothing held it: it still runs, as the ? says.
        expect(alive(pid)).toBe(true);
        process.kill(pid, "SIGKILL");
      }
      await new Promise((r) => run.on("exit", r));
    },
  );

  it("answers 14 calls in flight at once over the one shared connection", async () => {
    const w = plugin();
    await w.hello();
    const runs = await Promise.all(
      Array.from({ length: 14 }, (_, i) => exec(w, `sleep 0.5; echo ${i}`)),
    );
    expect(runs.map((r) => (r.result as { stdout?: string } | undefined)?.stdout)).toEqual(
      Array.from({ length: 14 }, (_, i) => `${i}\n`),
    );
    await w.close();
  });

  it("cuts a huge output so the reply stays under 1 MiB, marked partial", async () => {
    const w = plugin();
    await w.hello();
    const r = await exec(w, "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo tail >&2");
    // stderr ends with a line that says how much was cut.
    expect(r.result).toMatchObject({
      exitCode: 0,
      partial: true,
      stderr:
        "tail\nmu-plugin-ssh: output cut (at most 409600 bytes of each stream come back): stdout kept 409600 of 3000000 bytes, 2590400 cut\n",
    });
    expect(Math.max(...w.lines.map((l) => Buffer.byteLength(l)))).toBeLessThan(1024 * 1024);
    await w.close();
  });

  it("counts the reply in bytes: binary output, whose bytes turn into 3-byte replacement characters, still fits", async () => {
    const w = plugin();
    await w.hello();
    // 400 KB of bytes that are not UTF-8: under the limit in characters, over it in bytes.
    const r = await exec(w, "head -c 400000 /dev/zero | tr '\\0' '\\377'");
    expect(r.result).toMatchObject({ exitCode: 0, partial: true });
    // The count is of the script's bytes: each came back as one U+FFFD.
    const res = r.result as { stdout: string; stderr: string };
    const [, kept, cut] = /stdout kept (\d+) of 400000 bytes, (\d+) cut\n$/.exec(res.stderr) ?? [];
    expect(Number(kept) + Number(cut)).toBe(400000);
    expect(res.stdout.length).toBe(Number(kept));
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
    // Room for the three processes to start on a loaded machine: a timeout
    // that fires before "started" proves nothing about the kill.
    const r = await exec(w, script, 5_000);
    expect(r.result).toMatchObject({ exitCode: null, stdout: "started\n" });
    const seen = readPids(pids);
    expect(seen).toHaveLength(3);
    for (const pid of seen) expect(alive(pid), `pid ${pid} survived the timeout`).toBe(false);
    expect(existsSync(`${pids}.late`)).toBe(false);
    await w.close();
  });

  it("on timeoutMs also kills a grandchild that left both the group and the marker (env -i setsid nohup)", async () => {
    const w = plugin();
    await w.hello();
    const pids = join(sshd.home, "escape.pids");
    const script = [
      // A new session and an empty environment: neither the group nor the
      // marker reaches it, and its parent is gone before the timeout.
      `sh -c 'env -i setsid nohup sh -c "echo \\$\\$ > ${pids}; exec sleep 300" >/dev/null 2>&1 &'`,
      `while [ ! -s ${pids} ]; do sleep 0.05; done`,
      "echo started",
      "sleep 60",
    ].join("\n");
    const r = await exec(w, script, 5_000);
    expect(r.result).toMatchObject({ exitCode: null, stdout: "started\n" });
    const [pid] = readPids(pids);
    expect(pid).toBeGreaterThan(0);
    const survived = alive(pid ?? 0);
    // Its cleared environment hides it from the sshd's own sweep too.
    if (survived) process.kill(pid ?? 0, "SIGKILL");
    expect(survived, `pid ${pid} survived the timeout`).toBe(false);
    await w.close();
  });

  // Found retrying mu over ssh: a SIGKILL of mu mid-verb left the plugin's
  // ControlMaster running for good, reparented to init.
  it("a mu that dies mid-call leaves no ControlMaster behind", async () => {
    const w = plugin();
    await w.hello();
    expect((await exec(w, "true")).result).toMatchObject({ exitCode: 0 });
    const started = join(sshd.home, "midcall.started");
    void exec(w, `touch ${started}; sleep 1`, 20_000);
    await until("the script to start", () => existsSync(started));
    // As a SIGKILLed mu does: its ends of the pipes close, and the reply on
    // its way meets EPIPE.
    w.child.stdout?.destroy();
    w.child.stdin?.end();
    await w.exited;
    // Its master's ControlPath names the plugin's pid.
    const masters = () =>
      spawnSync("pgrep", ["-f", `ControlPath=[^ ]*mu-ssh-${w.child.pid}-`], {
        encoding: "utf8",
      }).stdout.trim();
    expect(w.child.pid).toBeGreaterThan(0);
    await until("the plugin's master to go", () => masters() === "", 10_000);
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
    // The plugin ended the run over a new connection before it answered, and says so.
    expect(res.error?.message).toMatch(/stopped the run and everything it started.*runs no more/);
    const [pid] = readPids(pids);
    expect(alive(pid ?? 0)).toBe(false);
    // The next call makes a new connection.
    expect((await exec(w, "echo again")).result).toMatchObject({ exitCode: 0, stdout: "again\n" });
    await w.close();
  });

  it("classes failures: refused is retryable, a bad key or host key is human with a remedy", async () => {
    const refused = track(
      new Wire([
        "--dest",
        `${userInfo().username}@127.0.0.1`,
        "-p",
        "1",
        "-i",
        sshd.key,
        "--home",
        sshd.home,
      ]),
    );
    await refused.hello();
    const r1 = await exec(refused, "true");
    expect(r1.error?.data.kind).toBe("retryable");
    await refused.close();

    const other = join(sshd.dir, "other_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
    const base = [
      "--dest",
      `${userInfo().username}@127.0.0.1`,
      "-p",
      String(sshd.port),
      "--home",
      sshd.home,
    ];
    const opts = ["-o", `UserKnownHostsFile=${sshd.knownHosts}`, "-o", "IdentitiesOnly=yes"];
    const badKey = track(new Wire([...base, "-i", other, ...opts, "-F", "/dev/null"]));
    await badKey.hello();
    const r2 = await exec(badKey, "true");
    expect(r2.error?.data.kind).toBe("human");
    expect(r2.error?.data.remedy).toMatch(/authorized_keys/);
    await badKey.close();

    const empty = join(sshd.dir, "empty_known_hosts");
    writeFileSync(empty, "");
    const badHost = track(
      new Wire([
        ...base,
        "-i",
        sshd.key,
        "-F",
        "/dev/null",
        "-o",
        `UserKnownHostsFile=${empty}`,
        "-o",
        "StrictHostKeyChecking=yes",
      ]),
    );
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
    expect(r.map((s) => s.ok)).toEqual([true, true, true, true, true, true]);
    const none = await w.call("link.checkSteps", { phase: "reach", root: "no/such/repo" });
    expect(none.result).toContainEqual(expect.objectContaining({ step: "repo", ok: "warn" }));
    await w.close();
  });
});

describe("mu-plugin-ssh through the real mu", { timeout: 180_000 }, () => {
  let st: ReturnType<typeof tempState>;
  let local: string;

  beforeAll(() => {
    st = tempState();
    local = oneCommitCheckout(st.dir);
    const add = muAt(local, ["plugin", "add", "ssh", "--", ...pluginArgv()], st.env);
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    expect(
      muAt(local, ["host", "add", "box", "--plugin", "ssh", "--repo", "work/repo"], st.env).code,
    ).toBe(0);
  }, 170_000);

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

    // A commit made on the host comes back into the checkout, as refs/mu/fetched/box.
    writeFileSync(join(remote, "b.txt"), "two\n");
    git(remote, "add", "b.txt");
    git(remote, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two");
    const f = muAt(local, ["host", "fetch", "box"], st.env);
    expect(f.stderr).toBe("");
    expect(f.code).toBe(0);
    expect(git(local, "rev-parse", "refs/mu/fetched/box")).toBe(git(remote, "rev-parse", "HEAD"));
  });

  it("mu host push into a bare repository the remote already has works, and again", () => {
    const rev = git(local, "rev-parse", "HEAD");
    const bare = join(sshd.home, "work/bare.git");
    mkdirSync(bare, { recursive: true });
    git(bare, "init", "-q", "--bare");
    expect(
      muAt(local, ["host", "add", "barebox", "--plugin", "ssh", "--repo", "work/bare.git"], st.env)
        .code,
    ).toBe(0);
    // The second push finds the commit there, and a bare repository has no tree to check out.
    for (const round of [1, 2]) {
      const p = muAt(local, ["host", "push", "barebox"], st.env);
      expect(p.stderr, `push ${round}`).toBe("");
      expect(p.code, `push ${round}`).toBe(0);
    }
    expect(git(bare, "rev-parse", `refs/mu/pushed/${rev}`)).toBe(rev);
  });

  it("mu host push through a registration whose remote root is missing says so and what to do, and makes nothing", () => {
    const nowhere = join(sshd.home, "nowhere");
    const argv = pluginArgv().map((a, i, all) => (all[i - 1] === "--home" ? nowhere : a));
    // A state of its own: the launcher's name allows one registration, as ssh.
    const own = tempState();
    try {
      expect(muAt(local, ["plugin", "add", "ssh", "--", ...argv], own.env).code).toBe(0);
      const add = ["host", "add", "nowhere", "--plugin", "ssh", "--repo", "work/repo"];
      expect(muAt(local, add, own.env).code).toBe(0);
      const p = muAt(local, ["host", "push", "nowhere"], own.env);
      expect(p.stderr).toMatch(
        new RegExp(
          `^mu: [a-z]+: [^\\n]*the remote root '${nowhere}' is missing or not writable; create it on the remote or fix --home in the plugin's registration\\n$`,
        ),
      );
      expect(p.code).toBe(5);
      expect(existsSync(nowhere)).toBe(false);
    } finally {
      own.done();
    }
  });

  it("mu host push to a --repo that cannot be made under the root says which path, why, and what to do", () => {
    writeFileSync(join(sshd.home, "blocker"), "a file where a directory should be\n");
    const add = ["host", "add", "blocked", "--plugin", "ssh", "--repo", "blocker/repo"];
    expect(muAt(local, add, st.env).code).toBe(0);
    const p = muAt(local, ["host", "push", "blocked"], st.env);
    expect(p.stderr).toMatch(
      /^mu: [a-z]+: [^\n]*the push could not make or enter the directory '\/[^']+\/blocker\/repo' on the remote \(mkdir: [^\n]*Not a directory\); make it a directory the ssh user can write, or push to another repository path; the plugin says a retry will not help[^\n]*\n$/,
    );
    expect(p.code).toBe(5);
    expect(muAt(local, ["host", "rm", "blocked"], st.env).code).toBe(0);
  });

  it("mu host check passes every step", () => {
    const r = muAt(local, ["host", "check", "box"], st.env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ssh:login/);
    // host check sends the profile's --repo as root: pushed above, so it is there.
    expect(r.stdout).toMatch(/ok\s+reach\s+ssh:repo/);
  });
});

describe("mu-plugin-ssh when things go away", { timeout: 180_000 }, () => {
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

  it("an sshd down for a second: the call waits, tries again and runs, inside its timeout", async () => {
    const w = plugin();
    await w.hello();
    await sshd.stop();
    const r = exec(w, "echo through", 20_000);
    await new Promise((res) => setTimeout(res, 1_000));
    await sshd.start();
    expect((await r).result).toMatchObject({ exitCode: 0, stdout: "through\n" });
    // A remote that stays down is still refused, once the timeout leaves no room.
    await sshd.stop();
    const began = Date.now();
    expect((await exec(w, "true", 2_000)).error?.data.kind).toBe("retryable");
    expect(Date.now() - began).toBeLessThan(10_000);
    await sshd.start();
    await w.close();
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
    expect((await exec(w, "true", 2_000)).error?.data.kind).toBe("retryable");
    await w.close();
    await until("the plugin's group to empty", () => !w.groupAlive());
    // The "remote" run is the machine's own business now; the suite cleans it up.
    sshd.killRemote();
    await sshd.start();
  });
});
