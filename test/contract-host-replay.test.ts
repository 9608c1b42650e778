import { describe, expect, it } from "vitest";
import { hostReplay } from "../host/contract/host-replay.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
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

// The host seam as mu's replay meets it, in-process against fake-provider.ts:
// every step after the acquire goes to a start that never saw it, and a late
// acquire behind a fence goes to the oldest start. Each case gives the check
// one answer a provider can give; the same check against plugins on the wire
// (memory-dedupe, memory-records, forget-released, ignore-fence) is in
// test/contract-host-fixture.test.ts.

const provider = perTest((hooks: Hooks = {}) => new FakeProvider(hooks));

const ALL: KeyCaps = { lookup: true, fenceKey: true, dedupe: { exact: true, windowMs: 5000 } };
const NONE: KeyCaps = { lookup: false, fenceKey: false };
const NOWHERE = { host: { name: CHECK_HOST } };

/** An acquire hook: correct for every key but the fenced one, where it does `late`. */
const lateAcquire =
  (p: () => FakeProvider, late: (make: () => unknown) => unknown): Hooks["acquire"] =>
  (key, _params, make) => {
    if (p().fenced.has(key)) return late(make);
    return { handle: make().handle };
  };

describe("the host seam's replay check", () => {
  it("with every cap declared: each step from a new process, then a late acquire behind a fence, refused", async () => {
    const p = provider();
    const out = await hostReplay(checkContext(), p.session(), { size: "s" }, ALL);
    expect(out.detail).toBe(
      "each step from a new process, the one that acquired killed: the identical acquire returned the first result; lookup found it up and released; status up, released, then status gone and a second release resolved; an acquire after a fenced none was refused (permanent) and made nothing",
    );
    const key = p.calls[0].params.key;
    expect(
      p.calls.map((c, i) => `${p.from[i]} ${c.method}${c.params.fence ? " fenced" : ""}`),
    ).toEqual([
      "2 host.acquire",
      "3 host.acquire",
      "3 host.lookup",
      "3 host.status",
      "3 host.release",
      "4 host.status",
      "4 host.lookup",
      "4 host.release",
      "4 host.lookup fenced",
      // the oldest start, one that began before the fence
      "1 host.acquire",
      "1 host.lookup",
    ]);
    expect(p.calls[1].params).toEqual({ target: NOWHERE, key, params: { size: "s" } });
    expect(p.calls[2].params).toEqual({ target: NOWHERE, key, fence: false });
    expect(p.calls[6].params).toEqual({ target: NOWHERE, key, fence: false });
    const fencedKey = p.calls[8].params.key;
    expect(fencedKey).not.toBe(key);
    expect(p.calls[9].params).toEqual({ target: NOWHERE, key: fencedKey, params: { size: "s" } });
    expect(p.calls[10].params).toEqual({ target: NOWHERE, key: fencedKey, fence: false });
    expect(p.killed).toBe(3);
    expect(p.states()).toEqual(["gone"]);
  });

  it("with nothing declared: no repeat, lookup or fence, and the pass names what was not exercised", async () => {
    const p = provider();
    const out = await hostReplay(checkContext(), p.session(), {}, NONE);
    expect(out.detail).toBe(
      "each step from a new process, the one that acquired killed: status up, released, then status gone and a second release resolved (not exercised: no exact dedupe declared; no lookup declared)",
    );
    expect(p.calls.map((c) => c.method)).toEqual([
      "host.acquire",
      "host.status",
      "host.release",
      "host.status",
      "host.release",
    ]);
  });

  it("lookup without a fence key: found after the release, and no fence tried", async () => {
    const p = provider();
    const out = await hostReplay(
      checkContext(),
      p.session(),
      {},
      { lookup: true, fenceKey: false },
    );
    expect(out.detail).toBe(
      "each step from a new process, the one that acquired killed: lookup found it up and released; status up, released, then status gone and a second release resolved (not exercised: no exact dedupe declared; no fenceKey declared)",
    );
    expect(p.calls.filter((c) => c.params.fence === true)).toEqual([]);
  });

  it("fails a repeat to a new process that does not return the first result, and releases the machine", async () => {
    let n = 0;
    const p = provider({
      acquire: (_key, _params, make) => {
        make();
        return { handle: `m${++n}` };
      },
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "the identical host.acquire sent to a new process did not return the first result",
    );
    expect(f.evidence).toEqual(['first: {"handle":"m1"}', 'repeat: {"handle":"m2"}']);
    expect(p.states()).toEqual(["gone"]);
  });

  it("fails a lookup from a new process that does not know the machine", async () => {
    const p = provider({ lookup: () => ({ none: true }) });
    const f = await failure(
      hostReplay(checkContext(), p.session(), {}, { lookup: true, fenceKey: false }),
    );
    expect(f.detail).toBe(
      'host.lookup from a new process answered {"none":true}, not found with handle m1',
    );
    expect(f.evidence).toEqual(['acquire: {"handle":"m1"}', 'lookup: {"none":true}']);
  });

  it("fails a lookup after the release that answers none", async () => {
    const p = provider({
      lookup: (_key, m) => (m?.state === "up" ? { found: { handle: m.handle } } : { none: true }),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      'host.lookup from a new process after the release answered {"none":true}, not found with handle m1',
    );
    expect(f.evidence).toEqual(['acquire: {"handle":"m1"}', 'lookup: {"none":true}']);
  });

  it("fails a release from the process that never acquired, naming it", async () => {
    const p = provider({ release: () => ({}) });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, NONE));
    expect(f.detail).toBe(
      "host.release from a new process that never acquired the host answered {}, not null",
    );
  });

  it("fails a second release that does not resolve, naming it", async () => {
    const p = provider({ release: (_key, n) => (n === 1 ? null : { gone: true }) });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, NONE));
    expect(f.detail).toBe(
      'a second host.release, from another new process answered {"gone":true}, not null',
    );
  });

  it("a failed check whose machine cannot be released shows both", async () => {
    const p = provider({
      lookup: () => ({ none: true }),
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const f = await failure(
      hostReplay(checkContext(), p.session(), {}, { lookup: true, fenceKey: false }),
    );
    expect(f.evidence).toEqual([
      'acquire: {"handle":"m1"}',
      'lookup: {"none":true}',
      `could not release m1 (key ${p.calls[0].params.key}): host.release answered an error (permanent): locked`,
    ]);
  });

  it("fails a fenced lookup of a key never used that answers other than none", async () => {
    const p = provider({
      lookup: (_key, m) => (m ? { found: { handle: m.handle } } : { none: false }),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      'a fenced host.lookup of a key never used answered {"none":false}, not none',
    );
    expect(f.evidence).toEqual(['{"none":false}']);
  });

  it("fails a late acquire behind the fence that takes effect, and releases its machine", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => ({ handle: (make() as { handle: string }).handle }),
      ),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a host.acquire after a fenced host.lookup of its key answered none took effect",
    );
    expect(f.evidence).toEqual([
      'acquire: {"handle":"m2"}',
      'lookup after: {"found":{"handle":"m2"}}',
    ]);
    expect(p.calls.at(-1)).toEqual({
      method: "host.release",
      params: {
        target: { host: { name: CHECK_HOST, instance: INSTANCE, handle: "m2" } },
        key: p.calls.at(-2)?.params.key,
      },
    });
    expect(p.states()).toEqual(["gone", "gone"]);
  });

  it("fails a late acquire refused as permanent whose machine a lookup then finds", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => {
          make();
          throw refusal("host.acquire", "fenced");
        },
      ),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a fenced host.acquire answered permanent, which says nothing happened, yet host.lookup then found the machine",
    );
    expect(f.evidence).toEqual([
      "host.acquire answered an error (permanent): fenced",
      'lookup after: {"found":{"handle":"m2"}}',
    ]);
  });

  it("fails a late acquire that answers an error promising nothing yet made a machine", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => {
          make();
          throw new ErrorReply("host.acquire", "unknown-outcome", "lost");
        },
      ),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a host.acquire after a fenced host.lookup of its key answered none made a machine",
    );
  });

  it("names the key to release by hand when the late machine's release fails", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => ({ handle: (make() as { handle: string }).handle }),
      ),
      release: (key) => {
        if (p.fenced.has(key)) throw refusal("host.release", "locked");
        return null;
      },
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    const key = p.calls.at(-1)?.params.key;
    expect(f.detail).toBe(
      `a host.acquire after a fenced host.lookup of its key answered none took effect; it could not be released (host.release answered an error (permanent): locked): release key ${key} by hand`,
    );
  });

  it("fails a late acquire that gets no answer, saying why", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        () => {
          throw new Error("the plugin closed its stdout");
        },
      ),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe("the plugin closed its stdout");
    expect(f.evidence).toEqual(["the plugin closed its stdout"]);
  });

  it("a late acquire refused as retryable that made nothing passes, naming the kind", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        () => {
          throw new ErrorReply("host.acquire", "retryable", "busy");
        },
      ),
    });
    const out = await hostReplay(checkContext(), p.session(), {}, ALL);
    expect(out.detail).toMatch(
      /; an acquire after a fenced none was refused \(retryable\) and made nothing$/,
    );
  });

  it("fails a late acquire refused as retryable whose machine a lookup then finds", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => {
          make();
          throw new ErrorReply("host.acquire", "retryable", "busy");
        },
      ),
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a fenced host.acquire answered retryable, which says nothing happened, yet host.lookup then found the machine",
    );
  });

  it("fails a late acquire that answered a machine though lookup knows none, and releases it by its handle", async () => {
    const p: FakeProvider = provider({
      acquire: lateAcquire(
        () => p,
        (make) => ({ handle: (make() as { handle: string }).handle }),
      ),
      lookup: (key, m) =>
        p.fenced.has(key) || !m ? { none: true } : { found: { handle: m.handle } },
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a host.acquire after a fenced host.lookup of its key answered none took effect",
    );
    expect(f.evidence).toEqual(['acquire: {"handle":"m2"}', 'lookup after: {"none":true}']);
    expect(p.calls.at(-1)?.params.target).toEqual({
      host: { name: CHECK_HOST, instance: INSTANCE, handle: "m2" },
    });
  });

  it("fails a repeated acquire the new process refuses, naming it as the repeat", async () => {
    const p: FakeProvider = provider({
      acquire: (key, _params, make) => {
        if (p.machines.has(key)) throw refusal("host.acquire", "duplicate");
        return { handle: make().handle };
      },
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a repeated host.acquire: host.acquire answered an error (permanent): duplicate",
    );
    expect(p.states()).toEqual(["gone"]);
  });

  it("fails a fenced lookup the provider refuses, naming it", async () => {
    const p = provider({
      lookup: (_key, m) => {
        if (!m) throw refusal("host.lookup", "fences not kept");
        return { found: { handle: m.handle } };
      },
    });
    const f = await failure(hostReplay(checkContext(), p.session(), {}, ALL));
    expect(f.detail).toBe(
      "a fenced host.lookup: host.lookup answered an error (permanent): fences not kept",
    );
  });

  it("an error that is not a check's failure passes through unchanged", async () => {
    const p = provider();
    const s = p.session();
    const boom = new Error("the plugin could not be started");
    s.again = async () => {
      throw boom;
    };
    await expect(hostReplay(checkContext(), s, {}, ALL)).rejects.toBe(boom);
  });
});
