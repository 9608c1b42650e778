import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fault } from "../sim/plugin/fault-types.js";
import { World } from "../sim/plugin/world.js";
import { processesOf, simLauncher } from "../sim/runner/sandbox.js";
import { tempState } from "./helpers.js";
import { harnessArgs, muAt, oneCommitCheckout, pluginArgv, sshd, useSshd } from "./ssh-kit.js";

// The replay table's rows against the REAL ssh plugin: the fault
// proxy (mu-plugin-sim --proxy) stands between the real mu and mu-plugin-ssh,
// which reaches a private sshd on 127.0.0.1; the world's fault script is set
// per case. What the remote really did is read from the plugin's own files
// there (~/.mu-plugin-ssh/jobs/<key>/). Needs sshd and ssh.

useSshd();

const jobsDir = () => join(sshd.home, ".mu-plugin-ssh/jobs");

/** Remote job directories whose start completed (a fenced key never gets `started`). */
function startedJobs(): string[] {
  if (!existsSync(jobsDir())) return [];
  return readdirSync(jobsDir()).filter((k) => existsSync(join(jobsDir(), k, "started")));
}

/** Receipts the remote channel committed, over every incarnation of a job. */
function receipts(key: string): string[] {
  const c = join(jobsDir(), key, "c");
  if (!existsSync(c)) return [];
  return readdirSync(c).flatMap((inc) => {
    const r = join(c, inc, "r");
    return existsSync(r) ? readdirSync(r).filter((f) => f.endsWith(".seq")) : [];
  });
}

describe("the fault proxy in front of the real ssh plugin", { timeout: 300_000 }, () => {
  let st: ReturnType<typeof tempState>;
  let local: string;
  let world: World;
  let env: Record<string, string>;

  /** The world's faults for the next case, none fired yet. */
  function faults(list: Fault[]): void {
    world.setConfig({ ...world.config(), faults: list });
    world.update((s) => {
      s.fired = [];
    });
  }

  beforeAll(() => {
    st = tempState();
    env = { ...st.env, MU_MUX: "sim" };
    local = oneCommitCheckout(st.dir);
    world = World.create(join(st.dir, "world"), { preset: "link-only", instance: "proxy" });
    // Registered as `sim`, the name the proxy's executable carries; the proxy
    // answers the handshake under that name, not the real plugin's `ssh`.
    const argv = [simLauncher(), "--world", world.dir, "--proxy", "--", ...pluginArgv(harnessArgs)];
    const add = muAt(local, ["plugin", "add", "sim", "--", ...argv], env);
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    expect(
      muAt(local, ["host", "add", "box", "--plugin", "sim", "--repo", "agents/repo"], env).code,
    ).toBe(0);
    expect(muAt(local, ["host", "push", "box"], env).code).toBe(0);
  }, 170_000);

  afterAll(() => {
    // Nothing of mu's, the proxy's or the plugin's may outlive the file.
    const left = st ? processesOf({ root: st.dir } as Parameters<typeof processesOf>[0]) : [];
    st?.done();
    expect(left, "local processes left running").toEqual([]);
  });

  it.each([
    ["crash", { crash: "after" } as const],
    ["killMu", { killMu: "after" } as const],
  ])(
    "delivery.receipt.accepted: %s right after the real channel applied channel.send; the remote ran it once",
    (label, fault) => {
      const name = `d-${label.toLowerCase()}`;
      faults([]);
      const before = startedJobs();
      const sp = muAt(local, ["agent", "spawn", name, "--host", "box"], env);
      expect(sp.stderr).toBe("");
      expect(sp.code).toBe(0);
      const [key] = startedJobs().filter((k) => !before.includes(k));
      expect(key).toBeDefined();

      const sends = world.state().calls["channel.send"] ?? 0;
      faults([{ on: "channel.send", do: fault }]);
      const send = muAt(local, ["agent", "send", name, "hello"], env);
      if (label === "crash") {
        expect(send.code).toBe(1);
        expect(send.stderr).toMatch(
          /channel[.]send for agent:main\/d-crash may or may not have happened/,
        );
      } else {
        // killMu: mu dies by SIGKILL, so spawnSync reports no exit code.
        expect(send.code).toBeNull();
      }
      faults([]);
      const rd = muAt(local, ["agent", "read", name], env);
      expect(rd.stderr).toMatch(
        new RegExp(
          `^mu: journal: channel[.]send for agent:main/${name} \\(key msg-[0-9a-f]+\\): delivery[.]receipt[.]accepted\\n$`,
        ),
      );
      expect(rd.code).toBe(0);
      const w = muAt(local, ["wait", name, "--timeout", "60"], env);
      expect(w.stdout).toMatch(/settled runs=1: answer to: hello/);
      expect(w.code).toBe(0);
      // The send went through the proxy once, and nothing resent it.
      expect(world.state().calls["channel.send"]).toBe(sends + 1);
      expect(muAt(local, ["state"], env).stdout).toBe("nothing pending\n");
      // Applied exactly once on the remote: one receipt, one turn of the harness.
      expect(receipts(key ?? "")).toHaveLength(1);
      const inc = join(jobsDir(), key ?? "", "c", "1");
      expect(readFileSync(join(inc, "runs"), "utf8").trim()).toBe("1");
      expect(existsSync(join(inc, "out.2"))).toBe(false);
      const cl = muAt(local, ["agent", "close", name], env);
      expect(cl.stderr).toBe("");
      expect(cl.code).toBe(0);
    },
  );

  // mu's crash points around job.start (docs/testbed.md, "Crash points") and the row
  // the same spawn must settle the leftover intent by.
  it.each([
    ["effect.intent-durable", /start[.]lookup[.]none[.]proven/],
    ["effect.request-written", /start[.]lookup[.]found/],
    ["effect.reply-read", /start[.]lookup[.]found/],
    ["effect.intent-deleted", null],
  ] as const)(
    "crash-point sweep: mu SIGKILLed at %s during a spawn; the same spawn settles it, one remote job",
    (point, row) => {
      faults([]);
      const name = `s-${point.replace(/^effect[.]/, "")}`;
      const before = startedJobs();
      const startsBefore = world.state().calls["job.start"] ?? 0;
      const crash = muAt(local, ["agent", "spawn", name, "--host", "box", "--send", "hi"], {
        ...env,
        MU_CRASH_AT: point,
      });
      expect(crash.code).toBeNull();
      const again = muAt(local, ["agent", "spawn", name, "--host", "box", "--send", "hi"], env);
      if (row) expect(again.stderr).toMatch(row);
      // Intent gone and outcome recorded: nothing left to settle, the spawn goes on.
      else expect(again.stderr).not.toMatch(/journal/);
      expect(again.code).toBe(0);
      expect(startedJobs().filter((k) => !before.includes(k))).toHaveLength(1);
      // One job.start reached the plugin in all: the crashed mu's, or, where it
      // died before writing one, the resend none-proven allows. Counted from
      // before the crash: a request written just before SIGKILL may reach the
      // proxy only after mu is gone, so a count taken then can miss it.
      expect((world.state().calls["job.start"] ?? 0) - startsBefore).toBe(1);
      expect(muAt(local, ["state"], env).stdout).toBe("nothing pending\n");
      expect(muAt(local, ["wait", name, "--timeout", "60"], env).stdout).toMatch(/answer to: hi/);
      const cl = muAt(local, ["agent", "close", name], env);
      expect(cl.stderr).toBe("");
      expect(cl.code).toBe(0);
    },
  );
});
