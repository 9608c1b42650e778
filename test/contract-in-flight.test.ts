import { describe, expect, it } from "vitest";
import { hostInFlight } from "../host/contract/in-flight.js";
import { CHECK_HOST } from "../host/contract/target.js";
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

// inFlightMs, as `mu plugin check` watches it, in-process against
// fake-provider.ts on a virtual clock: the acquire is held back until the
// clock reaches the time a case names, while another start asks lookup. The
// same check against a plugin on the wire (late-effect) is in
// test/contract-host-fixture.test.ts.

const provider = perTest((hooks: Hooks = {}) => new FakeProvider(hooks));

const caps = (inFlightMs?: number, lookup = true): KeyCaps => ({
  lookup,
  fenceKey: false,
  ...(inFlightMs === undefined ? {} : { inFlightMs }),
});

/** A provider whose acquire lands (or is refused) once the clock reaches ms. */
const landingAt = (ms: number, hooks: Hooks = {}, refuse = false) => {
  const p: FakeProvider = provider({
    ...hooks,
    acquire: (_key, _params, make) =>
      p.at(ms).then(() => {
        if (refuse) throw refusal("host.acquire", "no capacity");
        return { handle: make().handle };
      }),
  });
  return p;
};

const lookupTimes = (p: FakeProvider) =>
  p.calls.flatMap((c, i) => (c.method === "host.lookup" ? [p.from[i]] : []));

describe("inFlightMs, watched from another start", () => {
  it("skips a provider that declares no bound, or no lookup to read it by", async () => {
    const p = provider();
    expect(await hostInFlight(checkContext(), p.session(), {}, caps())).toEqual({
      result: "skip",
      detail: "the acquire declares no inFlightMs",
      evidence: [],
    });
    expect(await hostInFlight(checkContext(), p.session(), {}, caps(1000, false))).toEqual({
      result: "skip",
      detail: "inFlightMs bounds what a lookup's none proves; no lookup declared",
      evidence: [],
    });
    expect(p.calls).toEqual([]);
  });

  it("passes an acquire that lands inside the bound, having seen it in flight", async () => {
    const p = landingAt(600);
    const out = await hostInFlight(checkContext(), p.session(), { size: "s" }, caps(1000));
    expect(out.detail).toBe(
      "lookups from another process answered none up to 400 ms after the acquire was sent, then it landed at 600 ms, inside the declared inFlightMs 1000",
    );
    const key = p.calls[0].params.key;
    expect(p.calls[0]).toEqual({
      method: "host.acquire",
      params: { target: { host: { name: CHECK_HOST } }, key, params: { size: "s" } },
    });
    expect(p.calls[1]).toEqual({
      method: "host.lookup",
      params: { target: { host: { name: CHECK_HOST } }, key, fence: false },
    });
    // the watcher is the first start made, the sender the second: never the same process
    expect(p.from[0]).toBe(3);
    expect(lookupTimes(p)).toEqual([2, 2, 2, 2]);
    expect(p.times.slice(1, 5)).toEqual([0, 200, 400, 600]);
    expect(p.calls.at(-1)).toEqual({
      method: "host.release",
      params: { target: { host: { name: CHECK_HOST, handle: "m1", instance: INSTANCE } }, key },
    });
    expect(p.states()).toEqual(["gone"]);
    expect(p.closed).toBe(2);
    // a machine known is released by its handle only
    expect(p.calls.filter((c) => c.method === "host.release")).toHaveLength(1);
  });

  it("counts every time from the send, not from the clock's zero", async () => {
    const p = landingAt(7600);
    p.clock = 7000;
    const out = await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(out.detail).toBe(
      "lookups from another process answered none up to 400 ms after the acquire was sent, then it landed at 600 ms, inside the declared inFlightMs 1000",
    );
  });

  it("names the last none past the bound", async () => {
    const p = landingAt(2000);
    const f = await failure(hostInFlight(checkContext(), p.session(), {}, caps(1000)));
    expect(f.detail).toBe(
      "inFlightMs is 1000, yet a host.lookup sent 1800 ms after the acquire was sent answered none, and the machine came up 2000 ms after the acquire was sent",
    );
  });

  it("a machine landed when a lookup found it, which may be after the acquire answered", async () => {
    // Each lookup takes 50 ms: the one that finds the machine answers after the acquire did.
    const p: FakeProvider = landingAt(400, {
      lookup: (_key, m) => {
        p.clock += 50;
        return m ? { found: { handle: m.handle } } : { none: true };
      },
    });
    const out = await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(out.detail).toBe(
      "lookups from another process answered none up to 250 ms after the acquire was sent, then it landed at 550 ms, inside the declared inFlightMs 1000",
    );
  });

  it("asks every tenth of the bound, no more often than 200 ms and no less than 5 s", async () => {
    for (const [bound, step] of [
      [10_000, 1_000],
      [1_000, 200],
      [100, 200],
      [100_000, 5_000],
    ]) {
      const p = landingAt(3 * step);
      await hostInFlight(checkContext(), p.session(), {}, caps(bound)).catch(() => {});
      const asked = p.calls.flatMap((c, i) => (c.method === "host.lookup" ? [p.times[i]] : []));
      expect(asked, `bound ${bound}`).toEqual([0, step, 2 * step, 3 * step]);
    }
  });

  it("fails a none asked past the bound when the machine came after all, showing each lookup", async () => {
    const p = landingAt(1600);
    const f = await failure(hostInFlight(checkContext(), p.session(), {}, caps(1000)));
    expect(f.detail).toBe(
      "inFlightMs is 1000, yet a host.lookup sent 1400 ms after the acquire was sent answered none, and the machine came up 1600 ms after the acquire was sent",
    );
    expect(f.evidence).toEqual([
      'lookup sent at +1400 ms: {"none":true}',
      "9 lookups from +0 to +1600 ms, 8 of them none before the acquire answered",
      'lookup sent at +1600 ms: {"found":{"handle":"m1"}}',
      "acquire answered at +1600 ms: m1",
    ]);
    expect(p.states()).toEqual(["gone"]);
  });

  it("a none at the bound itself is inside it", async () => {
    const p = landingAt(1200);
    const out = await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(out.detail).toMatch(/^lookups from another process answered none up to 1000 ms/);
  });

  it("fails a lookup that answers none after the acquire answered with a machine", async () => {
    const p = landingAt(400, { lookup: () => ({ none: true }) });
    const f = await failure(hostInFlight(checkContext(), p.session(), {}, caps(1000)));
    expect(f.detail).toBe(
      "host.lookup from another process answered none after the acquire had answered with a machine",
    );
    expect(f.evidence).toEqual([
      "3 lookups from +0 to +400 ms, 2 of them none before the acquire answered",
      "acquire answered at +400 ms: m1",
    ]);
    expect(p.states()).toEqual(["gone"]);
  });

  it("is not provoked by an acquire that landed before the first lookup", async () => {
    const p = provider();
    const out = await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(out.detail).toBe(
      "not provoked: the acquire had landed (0 ms) before a lookup from another process could see it in flight",
    );
  });

  it("passes a refused acquire that made nothing, and releases its key all the same", async () => {
    const p = landingAt(400, {}, true);
    const out = await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(out.detail).toBe(
      "the acquire answered host.acquire answered an error (permanent): no capacity and lookups from another process found nothing (last sent at 200 ms)",
    );
    const key = p.calls[0].params.key;
    expect(p.calls.at(-1)).toEqual({
      method: "host.release",
      params: { target: { host: { name: CHECK_HOST } }, key },
    });
    expect(p.from.at(-1)).toBe(1);
  });

  it("a refused acquire whose machine a lookup found is held and released by its handle", async () => {
    const p: FakeProvider = provider({
      acquire: (_key, _params, make) =>
        p.at(400).then(() => {
          make();
          throw refusal("host.acquire", "no capacity");
        }),
    });
    await hostInFlight(checkContext(), p.session(), {}, caps(1000));
    expect(p.calls.at(-1)?.params.target).toEqual({
      host: { name: CHECK_HOST, handle: "m1", instance: INSTANCE },
    });
    expect(p.states()).toEqual(["gone"]);
  });

  it("a lookup the provider refuses fails the check, and the key is released", async () => {
    const p = landingAt(400, {
      lookup: () => {
        throw refusal("host.lookup", "unsupported");
      },
    });
    const f = await failure(hostInFlight(checkContext(), p.session(), {}, caps(1000)));
    expect(f.detail).toBe("host.lookup answered an error (permanent): unsupported");
    expect(p.calls.at(-1)?.method).toBe("host.release");
    expect(p.closed).toBe(2);
  });
});
