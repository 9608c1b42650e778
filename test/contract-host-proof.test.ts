import { describe, expect, it } from "vitest";
import { hostErrors, hostFacts } from "../host/contract/host-proof.js";
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

// Two host checks beyond the replay, in-process against fake-provider.ts:
// facts are a patch (a null clears, an absent fact keeps), and a refusal says
// nothing happened. Each case gives the check one answer a provider can give.

const provider = perTest((hooks: Hooks = {}) => new FakeProvider(hooks));

const LOOKUP: KeyCaps = { lookup: true, fenceKey: false };
const NO_LOOKUP: KeyCaps = { lookup: false, fenceKey: false };

/** A provider whose acquire and each status send the facts given, in turn. */
const withFacts = (acquired: object, ...statuses: object[]) =>
  provider({
    acquire: (_key, _params, make) => ({ handle: make().handle, ...acquired }),
    status: (m, n) => ({
      state: m?.state ?? "gone",
      handle: m?.handle,
      ...statuses[Math.min(n, statuses.length) - 1],
    }),
  });

describe("facts are a patch", () => {
  it("a provider that sends no facts passes, not exercised, from three starts", async () => {
    const p = provider();
    const out = await hostFacts(checkContext(), p.session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "neither the acquire nor the status of its machine from two new processes sent a fact (not exercised: no facts to patch)",
    );
    expect(p.calls.map((c) => c.method)).toEqual([
      "host.acquire",
      "host.status",
      "host.lookup",
      "host.status",
      "host.release",
    ]);
    expect(p.calls[2].params).toMatchObject({
      target: { host: { name: CHECK_HOST } },
      fence: false,
    });
    expect(p.calls[2].params.key).toBe(p.calls[0].params.key);
    expect(p.starts).toBe(4);
    expect(p.states()).toEqual(["gone"]);
  });

  it("without lookup the second status comes from another new process, with no lookup first", async () => {
    const p = provider();
    await hostFacts(checkContext(), p.session(), {}, NO_LOOKUP);
    expect(p.calls.map((c) => c.method)).toEqual([
      "host.acquire",
      "host.status",
      "host.status",
      "host.release",
    ]);
  });

  it("facts that read the same everywhere pass, named in the order mu knows them", async () => {
    const facts = { maxJobs: 2, deadlineAt: 1000 };
    const p = withFacts(facts, facts);
    const out = await hostFacts(checkContext(), p.session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "the facts deadlineAt, maxJobs read the same through the acquire and the status of its machine from two new processes, none cleared and sent back",
    );
  });

  it("a status that leaves a fact out keeps it, and passes", async () => {
    const p = withFacts({ idleReclaimMs: 5000 }, {});
    const out = await hostFacts(checkContext(), p.session(), {}, LOOKUP);
    expect(out.detail).toMatch(/^the facts idleReclaimMs read the same/);
  });

  it("fails a null that a later answer takes back unchanged, naming both answers and showing all", async () => {
    const p = withFacts({ deadlineAt: 1000 }, { deadlineAt: null }, { deadlineAt: 1000 });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, LOOKUP));
    expect(f.detail).toBe(
      "host.status from a new process, as its first call cleared deadlineAt with null, then host.status from a new process, after its lookup sent it back unchanged (1000): null clears a fact, so leave out one the process has not read",
    );
    expect(f.evidence).toEqual([
      'host.acquire: {"deadlineAt":1000,"handle":"m1"}',
      'host.status from a new process, as its first call: {"deadlineAt":null}',
      'host.status from a new process, after its lookup: {"deadlineAt":1000}',
    ]);
    expect(p.states()).toEqual(["gone"]);
  });

  it("a null followed by a new value is a change, and passes", async () => {
    const p = withFacts({ maxJobs: 2 }, { maxJobs: null }, { maxJobs: 3 });
    const out = await hostFacts(checkContext(), p.session(), {}, LOOKUP);
    expect(out.result).toBe("pass");
  });

  it("a null for a fact never sent is no clearing, and passes", async () => {
    const p = withFacts({}, { maxJobs: null }, { maxJobs: 2 });
    const out = await hostFacts(checkContext(), p.session(), {}, LOOKUP);
    expect(out.result).toBe("pass");
  });

  it("fails a machine whose status from a new process is not up, and releases it", async () => {
    const p = provider({ status: () => ({ state: "unknown" }) });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, LOOKUP));
    expect(f.detail).toBe(
      "host.status from a new process, as its first call answered unknown for the machine just acquired, not up",
    );
    expect(f.evidence).toEqual(['{"state":"unknown"}']);
    expect(p.states()).toEqual(["gone"]);
  });

  it("without lookup, names the second start as another new process where its status is not up", async () => {
    const p = provider({
      status: (m, n) => ({ state: n === 1 ? "up" : "unknown", handle: m?.handle }),
    });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, NO_LOOKUP));
    expect(f.detail).toBe(
      "host.status from another new process answered unknown for the machine just acquired, not up",
    );
  });

  it("fails a lookup the provider refuses, naming it", async () => {
    const p = provider({
      lookup: () => {
        throw refusal("host.lookup", "not supported");
      },
    });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, LOOKUP));
    expect(f.detail).toBe("host.lookup answered an error (permanent): not supported");
    expect(p.states()).toEqual(["gone"]);
  });

  it("an error that is not a check's failure passes through unchanged", async () => {
    const p = provider();
    const s = p.session();
    const boom = new Error("the plugin could not be started");
    s.again = async () => {
      throw boom;
    };
    await expect(hostFacts(checkContext(), s, {}, LOOKUP)).rejects.toBe(boom);
  });

  it("a check that fails and whose machine cannot be released shows both", async () => {
    const p = provider({
      status: () => ({ state: "unknown" }),
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, NO_LOOKUP));
    expect(f.evidence).toEqual([
      '{"state":"unknown"}',
      "could not release m1 (key " +
        `${p.calls[0].params.key}): host.release answered an error (permanent): locked`,
    ]);
  });

  it("a check that passes but cannot release its machine fails", async () => {
    const p = provider({
      release: () => {
        throw refusal("host.release", "locked");
      },
    });
    const f = await failure(hostFacts(checkContext(), p.session(), {}, NO_LOOKUP));
    expect(f.detail).toBe("the machine the check acquired could not be released");
    expect(f.evidence).toHaveLength(1);
  });
});

describe("a refusal says nothing happened", () => {
  const refusing = (kind: "permanent" | "retryable", effect = false) =>
    provider({
      acquire: (_key, params, make) => {
        if (params["mu-check-unknown"] !== undefined) {
          if (effect) make();
          throw new ErrorReply("host.acquire", kind, "unknown param mu-check-unknown");
        }
        return { handle: make().handle };
      },
    });

  it("asks with the author's params and one no one gave, to the check's host", async () => {
    const p = refusing("permanent");
    await hostErrors(checkContext(), p.session(), { size: "s" }, LOOKUP);
    expect(p.calls[0]).toMatchObject({
      method: "host.acquire",
      params: {
        target: { host: { name: CHECK_HOST } },
        params: { size: "s", "mu-check-unknown": "1" },
      },
    });
    expect(p.calls[1]).toEqual({
      method: "host.lookup",
      params: { target: { host: { name: CHECK_HOST } }, key: p.calls[0].params.key, fence: false },
    });
  });

  it("passes a permanent refusal that made nothing", async () => {
    const out = await hostErrors(checkContext(), refusing("permanent").session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "an acquire with a --param no one gave was refused (permanent) and a lookup found nothing (no retryable met)",
    );
  });

  it("passes a retryable refusal that made nothing", async () => {
    const out = await hostErrors(checkContext(), refusing("retryable").session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "an acquire with a --param no one gave was refused (retryable) and a lookup found nothing (no permanent met)",
    );
  });

  it("without lookup, says the refusal was not exercised", async () => {
    const p = refusing("permanent");
    const out = await hostErrors(checkContext(), p.session(), {}, NO_LOOKUP);
    expect(out.detail).toBe(
      "an acquire with a --param no one gave answered permanent (not exercised: no lookup declared to show it made nothing)",
    );
    expect(p.calls).toHaveLength(1);
  });

  it("fails a refusal whose acquire took effect, and releases what the lookup found", async () => {
    const p = refusing("permanent", true);
    const f = await failure(hostErrors(checkContext(), p.session(), {}, LOOKUP));
    expect(f.detail).toBe(
      "host.acquire answered permanent, which says nothing happened, yet host.lookup then found the machine",
    );
    expect(f.evidence).toEqual([
      "host.acquire answered an error (permanent): unknown param mu-check-unknown",
      'lookup after: {"found":{"handle":"m1"}}',
    ]);
    expect(p.states()).toEqual(["gone"]);
    expect(p.calls.at(-1)).toEqual({
      method: "host.release",
      params: {
        target: { host: { name: CHECK_HOST, handle: "m1", instance: INSTANCE } },
        key: p.calls[0].params.key,
      },
    });
  });

  it("an acquire that takes the unknown param is not provoked, and its machine is released", async () => {
    const p = provider();
    const out = await hostErrors(checkContext(), p.session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "not provoked: an acquire with a --param no one gave (mu-check-unknown) made a machine, released again; no retryable or permanent error met",
    );
    expect(p.states()).toEqual(["gone"]);
    expect(p.calls.at(-1)?.params.target).toEqual({
      host: { name: CHECK_HOST, handle: "m1", instance: INSTANCE },
    });
  });

  it("an error of another kind promises nothing: not provoked, and released by key", async () => {
    const p = provider({
      acquire: (_key, _params, make) => {
        make();
        throw new ErrorReply("host.acquire", "unknown-outcome", "lost track");
      },
    });
    const out = await hostErrors(checkContext(), p.session(), {}, LOOKUP);
    expect(out.detail).toBe(
      "not provoked: an acquire with a --param no one gave answered unknown-outcome, which promises nothing; released by key",
    );
    expect(p.calls.at(-1)).toEqual({
      method: "host.release",
      params: { target: { host: { name: CHECK_HOST } }, key: p.calls[0].params.key },
    });
    expect(p.states()).toEqual(["gone"]);
  });

  it("a release by key that fails is no failure of this check", async () => {
    const p = provider({
      acquire: () => {
        throw new ErrorReply("host.acquire", "unknown-outcome", "lost track");
      },
      release: () => {
        throw refusal("host.release", "no such key");
      },
    });
    const out = await hostErrors(checkContext(), p.session(), {}, LOOKUP);
    expect(out.result).toBe("pass");
  });

  it("fails an acquire that gets no answer, saying why", async () => {
    const p = provider({
      acquire: () => {
        throw new Error("no answer within 60 s");
      },
    });
    const f = await failure(hostErrors(checkContext(), p.session(), {}, LOOKUP));
    expect(f.detail).toBe("host.acquire with an unknown --param: no answer within 60 s");
    expect(f.evidence).toEqual(["no answer within 60 s"]);
  });
});
