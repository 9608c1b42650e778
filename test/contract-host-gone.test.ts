import { mkdirSync, rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hostGone } from "../host/contract/host-gone.js";
import { releaseMachines } from "../host/contract/machines-left.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import {
  checkContext,
  FakeProvider,
  failure,
  type Hooks,
  INSTANCE,
  perTest,
  sh,
} from "./fake-provider.js";

// The provider's gone check and the end-of-run release, in-process, against
// the fake provider of fake-provider.ts. Each case is one way a provider
// answers: the real-process runs of both (test/contract-host-fixture.test.ts)
// cover the correct provider and the breaks a fixture can show; these cover
// the rest of what the check says and sends.

const provider = perTest((hooks: Hooks = {}) => new FakeProvider(hooks));

describe("the gone check: a released machine runs nothing more", () => {
  it("passes a provider that refuses link.exec on the gone machine, naming the refusal's kind", async () => {
    const p = provider();
    const out = await hostGone(checkContext(), p.session(), {});
    expect(out).toMatchObject({ result: "pass" });
    expect(out.detail).toBe(
      "a file left on the machine, released from a new process, status gone, then link.exec there from another was refused (permanent)",
    );
    // acquire, then write and release, then status and exec, each on a start of its own, killed after
    expect(p.starts).toBe(4);
    expect(p.killed).toBe(3);
    const gone = p.calls.find((c) => c.method === "link.exec" && /echo/.test(`${c.params.script}`));
    expect(gone?.params).toMatchObject({ cwd: ".", timeoutMs: 20_000 });
  });

  it("passes a provider whose exec there answers a result that ran nothing, naming its exit code", async () => {
    const p = provider({
      goneExec: () => ({ exitCode: 255, stdout: "", stderr: "no such machine" }),
    });
    const out = await hostGone(checkContext(), p.session(), {});
    expect(out.detail).toBe(
      "a file left on the machine, released from a new process, status gone, then link.exec there from another ran nothing (exit 255)",
    );
  });

  it("passes a provider whose exec there answers null, and does not crash on it", async () => {
    const p = provider({ goneExec: () => null });
    const out = await hostGone(checkContext(), p.session(), {});
    expect(out.detail).toMatch(/ran nothing \(exit undefined\)$/);
  });

  it("fails a gone machine that still runs scripts, though its file is gone", async () => {
    const p = provider({
      goneExec: (script, dir) => {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir);
        return sh(script, dir);
      },
    });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toBe(
      "host.status answered gone for m1, yet link.exec from a new process still ran a script there",
    );
    expect(f.evidence[0]).toBe('status: {"state":"gone","handle":"m1"}');
    expect(f.evidence[1]).toMatch(
      /^exec: \{"exitCode":0,"stderr":"","stdout":"[0-9a-f]{16}\\n"\}$/,
    );
  });

  it("fails a gone machine that still reads the file left before the release, and says so", async () => {
    const p = provider({ goneExec: sh });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toBe(
      "host.status answered gone for m1, yet link.exec from a new process still ran a script there and read the file left before the release",
    );
  });

  it("fails, naming it, a result that holds the file's word though not the fresh one", async () => {
    const p = provider({
      goneExec: (script, dir) => sh(script.replace(/; echo \w+$/, ""), dir),
    });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toMatch(/and read the file left before the release$/);
  });

  it("fails a link.exec on the gone machine that gets no answer, and shows why", async () => {
    const p = provider({
      goneExec: () => {
        throw new Error("the plugin closed its stdout");
      },
    });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toBe("link.exec on the released machine: the plugin closed its stdout");
    expect(f.evidence).toEqual(["the plugin closed its stdout"]);
  });

  it("fails a machine whose first script fails, shows the result, and releases the machine", async () => {
    const p = provider({ liveExec: () => ({ exitCode: 1, stdout: "", stderr: "read-only" }) });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toBe(
      "a script that writes a file in the login directory of the acquired machine and reads it back failed",
    );
    expect(f.evidence).toEqual(['{"exitCode":1,"stderr":"read-only","stdout":""}']);
    expect([...p.machines.values()].map((m) => m.state)).toEqual(["gone"]);
  });

  it("fails a first script that reads back what it wrote yet exits non-zero", async () => {
    const p = provider({ liveExec: (script, dir) => ({ ...sh(script, dir), exitCode: 1 }) });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toMatch(/^a script that writes a file/);
  });

  it("fails a first script that exits 0 yet does not read back what it wrote", async () => {
    const p = provider({ liveExec: () => ({ exitCode: 0, stdout: "", stderr: "" }) });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toMatch(/^a script that writes a file/);
  });

  it("fails a release from the new process that answers something other than null, naming that release", async () => {
    const p = provider({ release: () => ({ ok: true }) });
    const f = await failure(hostGone(checkContext(), p.session(), {}));
    expect(f.detail).toBe('host.release from a new process answered {"ok":true}, not null');
  });
});

describe("the end of the run: every machine still owed is released", () => {
  const withHosts = (...hosts: [string, { handle?: string; released: boolean }][]) => {
    const ctx = checkContext();
    for (const [k, h] of hosts) ctx.made.hosts.set(k, h);
    return ctx;
  };
  const opener = (p: FakeProvider) => {
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
    const o = opener(provider());
    expect(await releaseMachines(checkContext(), o.open)).toEqual({ removed: [], left: [] });
    expect(o.opened()).toBe(0);
  });

  it("starts nothing when every machine was released already, and counts them", async () => {
    const o = opener(provider());
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
    const p = provider();
    const o = opener(p);
    const ctx = withHosts(
      ["a", { handle: "m1", released: true }],
      ["b", { handle: "m2", released: false }],
      ["c", { released: false }],
    );
    const out = await releaseMachines(ctx, o.open);
    expect(o.opened()).toBe(1);
    expect(p.closed).toBe(1);
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
    const p = provider({ release: (key) => (key === "b" ? { long } : null) });
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
    const p = provider({
      release: () => {
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
    const out = await releaseMachines(ctx, opener(provider()).open);
    expect(out.removed).toEqual(["released every machine it acquired (1)"]);
  });
});
