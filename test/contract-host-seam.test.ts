import { describe, expect, it } from "vitest";
import {
  acquire,
  cleanUp,
  idempotency,
  lifecycle,
  type Machine,
  release,
  statusUntil,
  withMachine,
} from "../host/contract/host-seam.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { CheckFailed } from "../host/contract/verdict.js";
import type { KeyCaps } from "../host/protocol/declaration.js";
import {
  checkContext,
  FakeProvider,
  failure,
  type Hooks,
  INSTANCE,
  perTest,
  refusal,
} from "./fake-provider.js";

// The host seam's checks (acquire, release, status, lookup, dedupe) as
// `mu plugin check` runs them, in-process against fake-provider.ts: each case
// gives the check one answer a provider can give and reads what the check
// sends, says and releases. The same checks against a plugin on the wire are
// in test/contract-host-fixture.test.ts.

const provider = perTest((hooks: Hooks = {}) => new FakeProvider(hooks));

const machine = async (p: FakeProvider, key = "k1"): Promise<Machine> =>
  acquire(p.session(), { size: "s" }, key);

describe("acquire and release", () => {
  it("acquire sends the check's host, the key and the author's params, and targets the machine under the start's instance", async () => {
    const p = provider();
    const m = await machine(p);
    expect(p.calls).toEqual([
      {
        method: "host.acquire",
        params: { target: { host: { name: CHECK_HOST } }, key: "k1", params: { size: "s" } },
      },
    ]);
    expect(m).toEqual({
      key: "k1",
      acquired: { handle: "m1" },
      target: { host: { name: CHECK_HOST, handle: "m1", instance: INSTANCE } },
      released: false,
    });
  });

  it("a refused acquire fails the check with the provider's words", async () => {
    const p = provider({
      acquire: () => {
        throw refusal("host.acquire", "no capacity");
      },
    });
    const f = await failure(machine(p));
    expect(f.detail).toBe("host.acquire answered an error (permanent): no capacity");
    expect(f.evidence).toEqual(["host.acquire answered an error (permanent): no capacity"]);
  });

  it("release sends the machine's target and key, and marks it released on null", async () => {
    const p = provider();
    const m = await machine(p);
    await release(p.session(), m);
    expect(p.calls[1]).toEqual({
      method: "host.release",
      params: { target: m.target, key: "k1" },
    });
    expect(m.released).toBe(true);
  });

  it("a release answering anything but null fails under the caller's name, the machine counted released", async () => {
    const p = provider({ release: () => ({ released: true }) });
    const m = await machine(p);
    const f = await failure(release(p.session(), m, "a late release"));
    expect(f.detail).toBe('a late release answered {"released":true}, not null');
    expect(f.evidence).toEqual(['{"released":true}']);
    expect(m.released).toBe(true);
    const g = await failure(release(p.session(), m));
    expect(g.detail).toMatch(/^host\.release answered/);
  });
});

describe("the clean-up of a machine a failed check still holds", () => {
  it("does nothing without a machine, or for one already released", async () => {
    const p = provider();
    const evidence: string[] = [];
    await cleanUp(p.session(), undefined, evidence);
    const m = await machine(p);
    m.released = true;
    await cleanUp(p.session(), m, evidence);
    expect(p.calls.map((c) => c.method)).toEqual(["host.acquire"]);
    expect(evidence).toEqual([]);
  });

  it("releases it on the same start while that start still talks, and says nothing", async () => {
    const p = provider();
    const m = await machine(p);
    const s = p.session();
    const evidence: string[] = [];
    await cleanUp(s, m, evidence);
    expect(evidence).toEqual([]);
    expect(p.states()).toEqual(["gone"]);
    expect(p.starts).toBe(2);
  });

  it("names the machine and the refusal when a start that still talks refuses the release, and starts no other", async () => {
    const p = provider({
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const m = await machine(p);
    const evidence: string[] = [];
    await cleanUp(p.session(), m, evidence);
    expect(evidence).toEqual([
      "could not release m1 (key k1): host.release answered an error (permanent): locked",
    ]);
    expect(p.starts).toBe(2);
  });

  it("shows a release's wrong answer by its evidence, not its headline", async () => {
    const p = provider({ release: () => "done" });
    const m = await machine(p);
    const evidence: string[] = [];
    await cleanUp(p.session(), m, evidence);
    expect(evidence).toEqual(['could not release m1 (key k1): "done"']);
  });

  it("releases from a fresh start when this one can no longer talk", async () => {
    const p = provider({
      conn: "closed",
      release: (_key, n) => {
        if (n === 1) throw new Error("the plugin exited");
        return null;
      },
    });
    const m = await machine(p);
    const evidence: string[] = [];
    await cleanUp(p.session(), m, evidence);
    expect(evidence).toEqual([]);
    expect(p.starts).toBe(3);
    expect(p.closed).toBe(1);
    expect(m.released).toBe(true);
  });

  it("asks for a release by hand when the fresh start fails too", async () => {
    const p = provider({
      conn: "closed",
      release: () => {
        throw new Error("the plugin exited");
      },
    });
    const m = await machine(p);
    const evidence: string[] = [];
    await cleanUp(p.session(), m, evidence);
    expect(evidence).toEqual([
      "could not release m1 (key k1): the plugin exited; release it by hand",
    ]);
  });
});

describe("a check run with a machine of its own", () => {
  it("answers what the check answered and releases the machine", async () => {
    const p = provider();
    const out = await withMachine(p.session(), {}, "k1", async (m) => m.acquired.handle);
    expect(out).toBe("m1");
    expect(p.states()).toEqual(["gone"]);
  });

  it("a check that failed keeps its headline and gains the clean-up's evidence", async () => {
    const p = provider({
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const f = await failure(
      withMachine(p.session(), {}, "k1", async () => {
        throw new CheckFailed("the check broke", ["its evidence"]);
      }),
    );
    expect(f.detail).toBe("the check broke");
    expect(f.evidence).toEqual([
      "its evidence",
      "could not release m1 (key k1): host.release answered an error (permanent): locked",
    ]);
  });

  it("an error that is not a check's failure passes through once the machine is released", async () => {
    const p = provider();
    const boom = new Error("boom");
    const err = await withMachine(p.session(), {}, "k1", async () => {
      throw boom;
    }).catch((e: unknown) => e);
    expect(err).toBe(boom);
    expect(p.states()).toEqual(["gone"]);
  });

  it("a check that passed, whose machine cannot be released, fails naming the machine", async () => {
    const p = provider({
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const f = await failure(withMachine(p.session(), {}, "k1", async () => "fine"));
    expect(f.detail).toBe(
      "the machine the check acquired could not be released: could not release m1 (key k1): host.release answered an error (permanent): locked",
    );
    expect(f.evidence).toHaveLength(1);
  });
});

describe("status, asked until it settles", () => {
  const seq =
    (...states: string[]) =>
    (m: { handle: string } | undefined, n: number) => ({
      state: states[Math.min(n, states.length) - 1],
      handle: m?.handle,
    });

  it("asks again every 250 ms while a machine is on its way up", async () => {
    const p = provider({ status: seq("unknown", "unknown", "up") });
    const m = await machine(p);
    const s = p.session();
    expect(await statusUntil(s, m, "up")).toEqual({ state: "up", handle: "m1" });
    expect(p.clock).toBe(500);
    expect(p.calls.filter((c) => c.method === "host.status")).toHaveLength(3);
    expect(p.calls[1].params).toEqual({ target: m.target });
  });

  it("waits through up on the way to gone", async () => {
    const p = provider({ status: seq("up", "gone") });
    const m = await machine(p);
    expect(await statusUntil(p.session(), m, "gone")).toMatchObject({ state: "gone" });
    expect(p.clock).toBe(250);
  });

  it("gone where up was due is an answer, at once", async () => {
    const p = provider({ status: seq("gone") });
    const m = await machine(p);
    const f = await failure(statusUntil(p.session(), m, "up"));
    expect(f.detail).toBe("host.status answered gone where up was due");
    expect(f.evidence).toEqual(['{"handle":"m1","state":"gone"}']);
    expect(p.clock).toBe(0);
  });

  it("up where gone was due fails once 30 s have passed, and says how long it waited", async () => {
    const p = provider({ status: seq("up") });
    const m = await machine(p);
    const f = await failure(statusUntil(p.session(), m, "gone"));
    expect(f.detail).toBe("host.status answered up for 30 s where gone was due");
    expect(p.clock).toBe(30_000);
  });

  it("unknown for ever fails once 30 s have passed", async () => {
    const p = provider({ status: seq("unknown") });
    const m = await machine(p);
    const f = await failure(statusUntil(p.session(), m, "up"));
    expect(f.detail).toBe("host.status answered unknown for 30 s where up was due");
  });

  it("a status call the provider refuses fails the check", async () => {
    const p = provider({
      status: () => {
        throw refusal("host.status", "no such machine");
      },
    });
    const m = await machine(p);
    const f = await failure(statusUntil(p.session(), m, "up"));
    expect(f.detail).toBe("host.status answered an error (permanent): no such machine");
  });
});

describe("the lifecycle check", () => {
  it("passes acquire, up, release, gone, naming the handle", async () => {
    const p = provider();
    const out = await lifecycle(checkContext(), p.session(), {});
    expect(out).toEqual({
      result: "pass",
      detail: "acquired m1, status up, released, status gone",
      evidence: [],
    });
    expect(p.calls.map((c) => c.method)).toEqual([
      "host.acquire",
      "host.status",
      "host.release",
      "host.status",
    ]);
  });

  it("fails a status up that names another handle, showing both answers", async () => {
    const p = provider({
      status: (m) => ({ state: m?.state === "gone" ? "gone" : "up", handle: "other" }),
    });
    const f = await failure(lifecycle(checkContext(), p.session(), {}));
    expect(f.detail).toBe("host.status up names handle other, not the m1 host.acquire gave");
    expect(f.evidence).toEqual([
      'acquire: {"handle":"m1"}',
      'status: {"handle":"other","state":"up"}',
    ]);
    expect(p.states()).toEqual(["gone"]);
  });

  it("every key it sends is the run's own", async () => {
    const p = provider();
    await lifecycle(checkContext(), p.session(), {});
    expect(p.calls[0].params.key).toMatch(/^mu-check-r1-[0-9a-f]{8}$/);
  });
});

describe("the idempotency check", () => {
  const all: KeyCaps = { lookup: true, fenceKey: false, dedupe: { exact: true, windowMs: 5000 } };
  const none: KeyCaps = { lookup: false, fenceKey: false };

  it("with dedupe and lookup declared: a repeat, a lookup, two releases and a lookup of an unused key, each round", async () => {
    const p = provider();
    const out = await idempotency(checkContext(), p.session(), { size: "s" }, all, 2);
    expect(out.detail).toBe(
      "2 rounds: a second release resolves; a repeat inside the 5000 ms window returns the first result; lookup finds what was acquired and answers none for an unused key",
    );
    const round = [
      "host.acquire",
      "host.acquire",
      "host.lookup",
      "host.release",
      "host.release",
      "host.lookup",
    ];
    expect(p.calls.map((c) => c.method)).toEqual([...round, ...round]);
    const [first, repeat, lookup, , , unused] = p.calls;
    expect(repeat.params).toEqual(first.params);
    expect(lookup.params).toEqual({
      target: { host: { name: CHECK_HOST } },
      key: first.params.key,
      fence: false,
    });
    expect(unused.params).toEqual({
      target: { host: { name: CHECK_HOST } },
      key: unused.params.key,
      fence: false,
    });
    expect(unused.params.key).not.toBe(first.params.key);
  });

  it("with neither declared: no repeat and no lookup are sent, and the pass says so", async () => {
    const p = provider();
    const out = await idempotency(checkContext(), p.session(), {}, none, 1);
    expect(out.detail).toBe(
      "1 rounds: a second release resolves; no dedupe declared, so no repeat was sent; no lookup declared",
    );
    expect(p.calls.map((c) => c.method)).toEqual(["host.acquire", "host.release", "host.release"]);
  });

  it("fails a repeat inside the window that makes a second machine, naming the round, and releases the key", async () => {
    let n = 0;
    const p = provider({
      acquire: (_key, _params, make) => {
        make();
        return { handle: `m${++n}` };
      },
    });
    const f = await failure(idempotency(checkContext(), p.session(), {}, all, 3));
    expect(f.detail).toBe(
      "round 1 of 3: a repeat of host.acquire inside the 5000 ms dedupe window did not return the first result",
    );
    expect(f.evidence).toEqual(['first: {"handle":"m1"}', 'repeat: {"handle":"m2"}']);
    expect(p.states()).toEqual(["gone"]);
  });

  it("fails a lookup that does not find the acquired machine", async () => {
    const p = provider({ lookup: () => ({ none: true }) });
    const f = await failure(idempotency(checkContext(), p.session(), {}, all, 1));
    expect(f.detail).toBe(
      'round 1 of 1: host.lookup of an acquired key answered {"none":true}, not found with handle m1',
    );
    expect(f.evidence).toEqual(['acquire: {"handle":"m1"}', 'lookup: {"none":true}']);
  });

  it("fails a lookup of a key never used that finds something", async () => {
    const p = provider({ lookup: () => ({ found: { handle: "m1" } }) });
    const f = await failure(idempotency(checkContext(), p.session(), {}, all, 1));
    expect(f.detail).toBe(
      'round 1 of 1: host.lookup of a key never used answered {"found":{"handle":"m1"}}, not none',
    );
    expect(f.evidence).toEqual(['{"found":{"handle":"m1"}}']);
  });

  it("fails a repeated acquire the provider refuses, naming it as the repeat", async () => {
    const p = provider({
      acquire: (key, _params, make) => {
        if (p.machines.has(key)) throw refusal("host.acquire", "duplicate key");
        return { handle: make().handle };
      },
    });
    const f = await failure(idempotency(checkContext(), p.session(), {}, all, 1));
    expect(f.detail).toBe(
      "round 1 of 1: a repeated host.acquire: host.acquire answered an error (permanent): duplicate key",
    );
  });

  it("fails a lookup of a key never used that the provider refuses", async () => {
    const p = provider({
      lookup: (_key, m) => {
        if (!m) throw refusal("host.lookup", "unknown key");
        return { found: { handle: m.handle } };
      },
    });
    const f = await failure(idempotency(checkContext(), p.session(), {}, all, 1));
    expect(f.detail).toBe("round 1 of 1: host.lookup answered an error (permanent): unknown key");
  });

  it("fails a second release that does not resolve", async () => {
    const p = provider({ release: (_k, n) => (n === 1 ? null : { error: "already" }) });
    const f = await failure(idempotency(checkContext(), p.session(), {}, none, 1));
    expect(f.detail).toBe(
      'round 1 of 1: a second host.release of the released host answered {"error":"already"}, not null',
    );
  });
});
