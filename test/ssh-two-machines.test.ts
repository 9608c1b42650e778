import { mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempState } from "./helpers.js";
import { harnessArgs, muAt, oneCommitCheckout, sshd, track, useSshd } from "./ssh-kit.js";
import { sshPluginBin, Wire } from "./ssh-wire.js";

// Two machines in one state dir: mu-plugin-ssh registered twice, once as
// itself and once through a link named mu-plugin-box2, which answers the
// handshake as box2 with a channel of its own. Both reach this file's sshd
// on 127.0.0.1, each under its own remote root, as two boxes would. Needs
// sshd and ssh, fails without them.

useSshd();

let st: ReturnType<typeof tempState>;
let link: string;
/** The second machine's remote root. */
let home2: string;

beforeAll(() => {
  st = tempState();
  mkdirSync(join(st.dir, "bin"));
  link = join(st.dir, "bin", "mu-plugin-box2");
  symlinkSync(sshPluginBin, link);
  home2 = mkdtempSync(join(sshd.dir, "remote2-"));
});
afterAll(() => st?.done());

const reach = (home: string) => ["--dest", "box", "-F", sshd.config, "--home", home];

/** Job directories the plugin keeps under a remote root. */
const jobsUnder = (home: string) => {
  try {
    return readdirSync(join(home, ".mu-plugin-ssh", "jobs")).sort();
  } catch {
    return [];
  }
};

describe("two registrations of mu-plugin-ssh, one through a link, in one state dir", {
  timeout: 180_000,
}, () => {
  let local: string;
  let env: Record<string, string>;

  beforeAll(() => {
    env = { ...st.env, MU_MUX: "sim" };
    local = oneCommitCheckout(st.dir);
    const one = [sshPluginBin, ...reach(sshd.home), ...harnessArgs];
    const two = [link, ...reach(home2), ...harnessArgs];
    for (const [name, argv] of [
      ["ssh", one],
      ["box2", two],
    ] as const) {
      const add = muAt(local, ["plugin", "add", name, "--", ...argv], env);
      expect(add.stderr).toBe("");
      expect(add.code).toBe(0);
    }
    for (const [host, name] of [
      ["box", "ssh"],
      ["box2", "box2"],
    ]) {
      const h = muAt(local, ["host", "add", host, "--plugin", name, "--repo", "agents/repo"], env);
      expect(h.code).toBe(0);
      expect(muAt(local, ["host", "push", host], env).code).toBe(0);
    }
  }, 170_000);

  it("both are listed, the link under its own name", () => {
    const r = muAt(local, ["plugin", "list"], env);
    expect(r.code).toBe(0);
    const line = (name: string) => r.stdout.split("\n").find((l) => l.startsWith(`${name}\t`));
    expect(line("ssh")).toContain(`\t${sshPluginBin} --dest box `);
    expect(line("box2")).toContain(`\t${link} --dest box `);
  });

  it("mu plugin check box2 passes through the link", () => {
    const r = muAt(
      local,
      [
        ...["plugin", "check", "box2", "--host", "box2"],
        ...["--seam", "link", "--seam", "job", "--seam", "channel", "--repeat", "1"],
      ],
      env,
    );
    expect(r.stdout).not.toMatch(/FAIL/);
    expect(r.code).toBe(0);
    expect(muAt(local, ["host", "check", "box2"], env).stdout).toMatch(/box2:harness/);
  });

  it("an agent on each, --worktree: spawn with a send, wait, read, send again, close", () => {
    const agents = [
      ["a", "box"],
      ["b", "box2"],
    ] as const;
    for (const [name, host] of agents) {
      const sp = muAt(
        local,
        ["agent", "spawn", name, "--host", host, "--worktree", "--send", `first for ${name}`],
        env,
      );
      expect(sp.stderr).toBe("");
      expect(sp.code).toBe(0);
    }
    // Each machine holds its own agent's job, and only that.
    const listed = JSON.parse(muAt(local, ["agent", "list", "--json"], env).stdout) as {
      agent: string;
      host: string;
      job: string;
      state: string;
    }[];
    const row = (agent: string) => listed.find((r) => r.agent === agent);
    expect(row("main/a")).toMatchObject({ host: "box", state: "running" });
    expect(row("main/b")).toMatchObject({ host: "box2", state: "running" });
    expect(jobsUnder(sshd.home)).toEqual([row("main/a")?.job]);
    expect(jobsUnder(home2)).toEqual([row("main/b")?.job]);
    for (const [name] of agents) {
      expect(muAt(local, ["wait", name, "--timeout", "60"], env).stdout).toMatch(
        new RegExp(`settled runs=1: answer to: first for ${name}`),
      );
      expect(muAt(local, ["agent", "read", name], env).stdout).toMatch(/idle\s+runs=1\s+inc=1/);
      const s = muAt(local, ["agent", "send", name, `second for ${name}`], env);
      expect(s.stderr).toBe("");
      expect(s.code).toBe(0);
    }
    for (const [name] of agents) {
      expect(muAt(local, ["wait", name, "--timeout", "60"], env).stdout).toMatch(
        new RegExp(`runs=2: answer to: second for ${name}`),
      );
      expect(muAt(local, ["agent", "read", name], env).stdout).toMatch(/idle\s+runs=2\s+inc=1/);
    }
    for (const [name] of agents) {
      const cl = muAt(local, ["agent", "close", name], env);
      expect(cl.stderr).toBe("");
      expect(cl.code).toBe(0);
      const ref = new RegExp(`\\((refs/mu/collected/main/${name}/job-[0-9a-f]+)\\)$`, "m");
      expect(ref.exec(cl.stdout)?.[1], cl.stdout).toBeDefined();
    }
    expect(muAt(local, ["agent", "list"], env).stdout).not.toMatch(/running/);
  });
});

describe("two registrations on one remote root share its .mu-plugin-ssh by job key", {
  timeout: 180_000,
}, () => {
  const spec = {
    workstream: "main",
    name: "a",
    harness: "fake",
    role: "full-access",
    cmd: "fake",
    commandSource: "harness",
    cwd: ".",
    env: { FAKE_THINK_S: "0.2" },
  };

  async function started(w: Wire, name: string, key: string): Promise<void> {
    const hello = await w.hello();
    expect(hello.result).toMatchObject({
      plugin: { name },
      seams: { job: { channel: name }, channel: { name } },
    });
    w.target = {
      host: { name },
      job: { kind: "ssh", key },
      agent: { workstream: "main", name, incarnation: 1 },
    };
    expect((await w.call("job.start", { key, spec })).error).toBeUndefined();
  }

  async function turn(w: Wire, name: string, text: string, msgId: string, after: number) {
    const send = await w.call("channel.send", {
      text,
      msgId,
      mode: "followUp",
      force: false,
      firstPrompt: after === 0,
    });
    expect(send.result).toMatchObject({ channel: name, ack: "confirmed", msgId });
    const { watchId } = (await w.call("channel.watch", { afterRuns: after })).result as {
      watchId: string;
    };
    expect((await w.note(watchId)).params.observation).toMatchObject({
      runs: after + 1,
      lastText: expect.stringMatching(new RegExp(`^answer to: ${text} `)),
    });
  }

  it("each start, send and stop touches its own key's files only", async () => {
    const home = mkdtempSync(join(sshd.dir, "shared-"));
    const one = track(new Wire(reach(home).concat(harnessArgs)));
    const two = track(new Wire(reach(home).concat(harnessArgs), process.env, link));
    // Keys as mu draws them: a fresh random one per spawn, whatever the plugin.
    await started(one, "ssh", "job-1111111111111111");
    await started(two, "box2", "job-2222222222222222");
    expect(jobsUnder(home)).toEqual(["job-1111111111111111", "job-2222222222222222"]);
    await turn(one, "ssh", "to one", "m1", 0);
    await turn(two, "box2", "to two", "m1", 0);
    // The same msgId on the other job is that job's own receipt.
    expect((await one.call("channel.receipt", { msgId: "m1" })).result).toMatchObject({
      state: "accepted",
      runs: 0,
    });
    // One job's stop leaves the other's running and taking turns.
    expect((await one.call("job.stop", { key: "job-1111111111111111" })).result).toBeNull();
    expect((await one.call("job.status")).result).toEqual({ state: "ended", exit: null });
    expect((await two.call("job.status")).result).toEqual({ state: "running" });
    await turn(two, "box2", "again", "m2", 1);
    expect((await two.call("job.stop", { key: "job-2222222222222222" })).result).toBeNull();
    expect(await one.close()).toBe(0);
    expect(await two.close()).toBe(0);
  });
});
