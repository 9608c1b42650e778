import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostGone } from "../host/contract/host-gone.js";
import { releaseMachines } from "../host/contract/machines-left.js";
import { nothingMade } from "../host/contract/made.js";
import type { RunContext, Session } from "../host/contract/session.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { CheckFailed } from "../host/contract/verdict.js";
import { ErrorReply } from "../host/plugin/call-errors.js";

// The provider's gone check and the end-of-run release, in-process, against
// a small provider whose machines are directories and whose link.exec runs
// each script under sh there. Each case is one way a provider answers: the
// real-process runs of both (test/contract-host-fixture.test.ts) cover the
// correct provider and the breaks a fixture can show; these cover the rest of
// what the check says and sends.

const INSTANCE = "inst-1";

type Exec = { exitCode: number; stdout: string; stderr: string };

interface Options {
  /** What link.exec on a released machine does; a correct provider refuses it. */
  goneExec?: (script: string, dir: string) => Exec | null;
  /** What link.exec does on a live machine; by default it runs the script. */
  liveExec?: (script: string, dir: string) => Exec;
  /** What host.release answers; null by default. */
  releaseAnswer?: (key: string) => unknown;
}

const run = (script: string, dir: string): Exec => {
  try {
    const stdout = execFileSync("sh", ["-c", script], { cwd: dir, encoding: "utf8" });
    return { exitCode: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { exitCode: e.status, stdout: e.stdout, stderr: e.stderr };
  }
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

class Provider {
  readonly home = mkdtempSync(join(tmpdir(), "mu-gone-"));
  readonly machines = new Map<string, { handle: string; state: "up" | "gone"; dir: string }>();
  readonly calls: { method: string; params: Record<string, unknown> }[] = [];
  starts = 0;

  constructor(readonly opts: Options = {}) {
    dirs.push(this.home);
  }

  byHandle(handle: unknown) {
    return [...this.machines.values()].find((m) => m.handle === handle);
  }

  answer(method: string, params: Record<string, unknown>): unknown {
    this.calls.push({ method, params });
    const host = (params.target as { host: { handle?: string } }).host;
    if (method === "host.acquire") {
      const key = params.key as string;
      const handle = `m${this.machines.size + 1}`;
      const dir = join(this.home, handle);
      mkdirSync(dir);
      this.machines.set(key, { handle, state: "up", dir });
      return { handle, facts: {} };
    }
    if (method === "host.release") {
      const m = this.machines.get(params.key as string);
      if (m) {
        m.state = "gone";
        if (!this.opts.goneExec) rmSync(m.dir, { recursive: true, force: true });
      }
      return this.opts.releaseAnswer ? this.opts.releaseAnswer(params.key as string) : null;
    }
    if (method === "host.status") {
      const m = this.byHandle(host.handle);
      return { state: m?.state ?? "gone", handle: host.handle };
    }
    if (method === "link.exec") {
      const m = this.byHandle(host.handle);
      const script = params.script as string;
      if (!m || m.state === "gone") {
        if (!this.opts.goneExec)
          throw new ErrorReply("link.exec", "permanent", "that machine is gone");
        return this.opts.goneExec(script, m?.dir ?? this.home);
      }
      return (this.opts.liveExec ?? run)(script, m.dir);
    }
    throw new Error(`the fake provider does not know ${method}`);
  }

  session(): Session {
    this.starts++;
    const fake = {
      hello: { instance: INSTANCE },
      proc: { conn: { state: "open" } },
      now: () => Date.now(),
      sleep: async () => {},
      call: async (method: string, params: Record<string, unknown>) => this.answer(method, params),
      again: async () => this.session(),
      kill: async () => {},
      close: async () => {},
    };
    return fake as unknown as Session;
  }
}

const context = (): RunContext => ({ runId: "r1", made: nothingMade() }) as unknown as RunContext;

async function failure(p: Promise<unknown>): Promise<CheckFailed> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CheckFailed);
  return err as CheckFailed;
}

describe("the gone check: a released machine runs nothing more", () => {
  it("passes a provider that refuses link.exec on the gone machine, naming the refusal's kind", async () => {
    const p = new Provider();
    const out = await hostGone(context(), p.session(), {});
    expect(out).toMatchObject({ result: "pass" });
    expect(out.detail).toBe(
      "a file left on the machine, released from a new process, status gone, then link.exec there from another was refused (permanent)",
    );
    // acquire, write, release, status and exec, each from a start of its own
    expect(p.starts).toBe(4);
    const gone = p.calls.find((c) => c.method === "link.exec" && /echo/.test(`${c.params.script}`));
    expect(gone?.params).toMatchObject({ cwd: ".", timeoutMs: 20_000 });
  });

  it("passes a provider whose exec there answers a result that ran nothing, naming its exit code", async () => {
    const p = new Provider({
      goneExec: () => ({ exitCode: 255, stdout: "", stderr: "no such machine" }),
    });
    const out = await hostGone(context(), p.session(), {});
    expect(out.detail).toBe(
      "a file left on the machine, released from a new process, status gone, then link.exec there from another ran nothing (exit 255)",
    );
  });

  it("passes a provider whose exec there answers null, and does not crash on it", async () => {
    const p = new Provider({ goneExec: () => null });
    const out = await hostGone(context(), p.session(), {});
    expect(out.detail).toMatch(/ran nothing \(exit undefined\)$/);
  });

  it("fails a gone machine that still runs scripts, though its file is gone", async () => {
    const p = new Provider({
      goneExec: (script, dir) => {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir);
        return run(script, dir);
      },
    });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toBe(
      "host.status answered gone for m1, yet link.exec from a new process still ran a script there",
    );
    expect(f.evidence[0]).toBe('status: {"state":"gone","handle":"m1"}');
    expect(f.evidence[1]).toMatch(
      /^exec: \{"exitCode":0,"stderr":"","stdout":"[0-9a-f]{16}\\n"\}$/,
    );
  });

  it("fails a gone machine that still reads the file left before the release, and says so", async () => {
    const p = new Provider({ goneExec: run });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toBe(
      "host.status answered gone for m1, yet link.exec from a new process still ran a script there and read the file left before the release",
    );
  });

  it("fails, naming it, a result that holds the file's word though not the fresh one", async () => {
    const p = new Provider({
      goneExec: (script, dir) => run(script.replace(/; echo \w+$/, ""), dir),
    });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toMatch(/and read the file left before the release$/);
  });

  it("fails a link.exec on the gone machine that gets no answer, and shows why", async () => {
    const p = new Provider({
      goneExec: () => {
        throw new Error("the plugin closed its stdout");
      },
    });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toBe("link.exec on the released machine: the plugin closed its stdout");
    expect(f.evidence).toEqual(["the plugin closed its stdout"]);
  });

  it("fails a machine whose first script fails, shows the result, and releases the machine", async () => {
    const p = new Provider({ liveExec: () => ({ exitCode: 1, stdout: "", stderr: "read-only" }) });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toBe(
      "a script that writes a file in the login directory of the acquired machine and reads it back failed",
    );
    expect(f.evidence).toEqual(['{"exitCode":1,"stderr":"read-only","stdout":""}']);
    expect([...p.machines.values()].map((m) => m.state)).toEqual(["gone"]);
  });

  it("fails a first script that exits 0 yet does not read back what it wrote", async () => {
    const p = new Provider({ liveExec: () => ({ exitCode: 0, stdout: "", stderr: "" }) });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toMatch(/^a script that writes a file/);
  });

  it("fails a release from the new process that answers something other than null, naming that release", async () => {
    const p = new Provider({ releaseAnswer: () => ({ ok: true }) });
    const f = await failure(hostGone(context(), p.session(), {}));
    expect(f.detail).toBe('host.release from a new process answered {"ok":true}, not null');
  });
});

describe("the end of the run: every machine still owed is released", () => {
  const withHosts = (...hosts: [string, { handle?: string; released: boolean }][]) => {
    const ctx = context();
    for (const [k, h] of hosts) ctx.made.hosts.set(k, h);
    return ctx;
  };
  const opener = (p: Provider) => {
    let opened = 0;
    return {
      open: async () => {
        opened++;
        return p.session();
      },
      opened: () => opened,
    };
  };

  it("says nothing and starts nothing when the run acquired nothing", async () => {
    const o = opener(new Provider());
    expect(await releaseMachines(context(), o.open)).toEqual({ removed: [], left: [] });
    expect(o.opened()).toBe(0);
  });

  it("starts nothing when every machine was released already, and counts them", async () => {
    const o = opener(new Provider());
    const ctx = withHosts(
      ["a", { handle: "m1", released: true }],
      ["b", { handle: "m2", released: true }],
    );
    expect(await releaseMachines(ctx, o.open)).toEqual({
      removed: ["released every machine it acquired (2)"],
      left: [],
    });
    expect(o.opened()).toBe(0);
  });

  it("releases each owed key, with its handle where one is known, under the new start's instance", async () => {
    const p = new Provider();
    const o = opener(p);
    const ctx = withHosts(
      ["a", { handle: "m1", released: true }],
      ["b", { handle: "m2", released: false }],
      ["c", { released: false }],
    );
    const out = await releaseMachines(ctx, o.open);
    expect(o.opened()).toBe(1);
    expect(p.calls).toEqual([
      {
        method: "host.release",
        params: {
          target: { host: { name: CHECK_HOST, instance: INSTANCE, handle: "m2" } },
          key: "b",
        },
      },
      {
        method: "host.release",
        params: { target: { host: { name: CHECK_HOST, instance: INSTANCE } }, key: "c" },
      },
    ]);
    expect(out).toEqual({
      removed: [
        "released every machine it acquired (2, 1 of them at the end), and released by key the 1 whose acquire was refused, in case one took effect all the same",
      ],
      left: [],
    });
  });

  it("names each key whose release answered something other than null, with the answer cut short", async () => {
    const long = "x".repeat(200);
    const p = new Provider({ releaseAnswer: (key) => (key === "b" ? { long } : null) });
    const ctx = withHosts(["b", { handle: "m2", released: false }], ["c", { released: false }]);
    const out = await releaseMachines(ctx, opener(p).open);
    expect(out.removed).toEqual([]);
    expect(out.left).toEqual([
      {
        what: `the machine for key b (m2): the release at the end failed (it answered ${JSON.stringify({ long }).slice(0, 100)}); release it at the provider`,
      },
    ]);
  });

  it("names each key whose release failed, with the provider's error", async () => {
    const p = new Provider({
      releaseAnswer: () => {
        throw new ErrorReply("host.release", "permanent", "no such key");
      },
    });
    const out = await releaseMachines(withHosts(["c", { released: false }]), opener(p).open);
    expect(out.left).toEqual([
      {
        what: "the machine for key c: the release at the end failed (host.release answered an error (permanent): no such key); release it at the provider",
      },
    ]);
  });

  it("names every owed key when the plugin cannot be started for the clean-up", async () => {
    const ctx = withHosts(
      ["a", { handle: "m1", released: true }],
      ["b", { released: false }],
      ["c", { handle: "m3", released: false }],
    );
    const out = await releaseMachines(ctx, async () => {
      throw new Error("spawn ENOENT");
    });
    expect(out).toEqual({
      removed: [],
      left: [
        {
          what: "the machines for keys b, c: the cleanup could not start the plugin (spawn ENOENT); release them at the provider",
        },
      ],
    });
  });

  it("counts a run whose machines were all released by their checks and none refused, without the extra clauses", async () => {
    const ctx = withHosts(["a", { handle: "m1", released: true }]);
    const out = await releaseMachines(ctx, opener(new Provider()).open);
    expect(out.removed).toEqual(["released every machine it acquired (1)"]);
  });
});
