import { describe, expect, it } from "vitest";
import { inFlightSkip, jobInFlight } from "../host/contract/job-inflight.js";
import { EFFECT_MS } from "../host/contract/job-seam.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import type { JobSeam, KeyCaps } from "../host/protocol/declaration.js";
import { ALL_CAPS, FakeJobPlugin, type JobHooks, jobSeam } from "./fake-job-plugin.js";
import { checkContext, failure, type Hooks, INSTANCE, perTest, refusal } from "./fake-provider.js";

// inFlightMs for job.start, as `mu plugin check` watches it, in-process
// against fake-job-plugin.ts on a virtual clock: the start is held back until
// the clock reaches the time a case names, while another start of the plugin
// asks lookup and the sending start is killed. The same check against a
// plugin on the wire (late-start) is in test/contract-job-fixture.test.ts.

const plugin = perTest(
  (seam: JobSeam = jobSeam(), hooks: JobHooks = {}, provider?: Hooks) =>
    new FakeJobPlugin(seam, hooks, provider),
);

const caps = (inFlightMs: number, more: Partial<KeyCaps> = {}): KeyCaps => ({
  ...ALL_CAPS,
  inFlightMs,
  ...more,
});

/** A plugin whose first start makes its job and answers once the clock reaches ms; a repeat answers at once. */
const landingAt = (ms: number, seam = jobSeam(), hooks: JobHooks = {}, provider?: Hooks) => {
  const p: FakeJobPlugin = plugin(
    seam,
    { ...hooks, start: (_key, make, n) => (n === 1 ? p.at(ms).then(make) : make()) },
    provider,
  );
  return p;
};

/** Lookups that see a start in flight: pending until its job is made. */
const seesPending: JobHooks["lookup"] = (_key, j, _fence, answer) =>
  j ? answer() : { pending: true };

/** A start whose process dies with it: it never answers and makes nothing. */
const never = () => new Promise<never>(() => {});

const inFlight = (p: FakeJobPlugin, params: Record<string, string> = {}) =>
  jobInFlight(checkContext(), p.session(), p.hello, params);

const steps = (p: FakeJobPlugin) => p.calls.map((c, i) => `${p.from[i]} ${c.method}`);
const lookupTimes = (p: FakeJobPlugin) =>
  p.calls.flatMap((c, i) => (c.method === "job.lookup" ? [p.times[i]] : []));
const REPEATED = "; the identical start from a new process returned the job found";
const none = '{"none":true}';
const found1 = '{"found":{"handle":"j1","view":{"command":"fake-attach j1","env":{}}}}';

describe("what the declaration leaves to test", () => {
  it("skips a plugin with no lookup to settle a start by, or no bound to read it against", () => {
    const h = plugin().hello;
    const without = (job?: JobSeam) => inFlightSkip({ ...h, seams: job ? { job } : {} });
    const noLookup = {
      result: "skip",
      detail: "a start killed in flight is settled by lookup; no lookup declared",
      evidence: [],
    };
    expect(without()).toEqual(noLookup);
    expect(without(jobSeam(caps(1000, { lookup: false })))).toEqual(noLookup);
    expect(without(jobSeam({ lookup: true, fenceKey: false }))).toEqual({
      result: "skip",
      detail: "the start declares no inFlightMs",
      evidence: [],
    });
    expect(without(jobSeam(caps(0)))).toBeUndefined();
  });
});

describe("a start killed in flight, watched from another start", () => {
  it("passes a start that lands inside the bound after its process was killed a second after the send", async () => {
    const p = landingAt(1500, jobSeam(caps(5000)));
    const out = await inFlight(p);
    expect(out).toEqual({
      result: "pass",
      detail: `the start's process SIGKILLed at +1000 ms; another process's lookups answered none 6 times inside the declared inFlightMs 5000, then found it at +1500 ms${REPEATED}`,
      evidence: [],
    });
    // the watcher is the first start made, the sender the second: never the same process
    expect(steps(p)).toEqual([
      "3 job.start",
      ...Array(7).fill("2 job.lookup"),
      "4 job.start",
      "5 job.stop",
    ]);
    // Quick until the kill, a tenth of the bound after.
    expect(lookupTimes(p)).toEqual([0, 200, 400, 600, 800, 1000, 1500]);
    const [start, lookup] = p.calls.map((c) => c.params);
    const key = start?.key;
    expect(Object.keys(start ?? {})).toEqual(["target", "key", "spec"]);
    expect(p.targetOf(0)).toEqual({
      host: { name: CHECK_HOST, instance: INSTANCE },
      job: { kind: "fake", key },
      agent: { workstream: "mu-check", name: expect.stringMatching(/^check-/), incarnation: 1 },
    });
    expect(lookup).toEqual({ target: start?.target, key, fence: false });
    expect(p.calls[8]?.params).toEqual(start);
    expect(p.calls[9]?.params).toEqual({
      target: { ...p.targetOf(0), job: { kind: "fake", key, handle: "j1" } },
      key,
    });
    expect(p.timeouts[0]).toBe(EFFECT_MS);
    expect(p.timeouts[1]).toBeUndefined();
    expect(p.killed).toBe(3);
    expect(p.closed).toBe(1);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("counts every time from the send, not from the clock's zero", async () => {
    const p = landingAt(8500, jobSeam(caps(5000)));
    p.clock = 7000;
    const out = await inFlight(p);
    expect(out.detail).toBe(
      `the start's process SIGKILLed at +1000 ms; another process's lookups answered none 6 times inside the declared inFlightMs 5000, then found it at +1500 ms${REPEATED}`,
    );
    expect(lookupTimes(p)).toEqual([7000, 7200, 7400, 7600, 7800, 8000, 8500]);
  });

  it("kills the start's process the moment a lookup sees it pending", async () => {
    const p = landingAt(600, jobSeam(caps(1000)), { lookup: seesPending });
    const out = await inFlight(p);
    expect(out.detail).toBe(
      `the start's process SIGKILLed at +0 ms; another process's lookups answered none 0 times inside the declared inFlightMs 1000, then found it at +600 ms${REPEATED}`,
    );
    expect(lookupTimes(p)).toEqual([0, 200, 400, 600]);
  });

  it("is not provoked by a start that had answered before a lookup saw it", async () => {
    const p = plugin(jobSeam(caps(1000)));
    const out = await inFlight(p);
    expect(out.detail).toBe(
      `not provoked: the start's process SIGKILLed at +0 ms (the start had answered at +0 ms); another process's lookups answered none 0 times inside the declared inFlightMs 1000, then found it at +0 ms${REPEATED}`,
    );
    const once = landingAt(100, jobSeam(caps(1000)));
    expect((await inFlight(once)).detail).toBe(
      `not provoked: the start's process SIGKILLed at +200 ms (the start had answered at +200 ms); another process's lookups answered none once inside the declared inFlightMs 1000, then found it at +200 ms${REPEATED}`,
    );
  });

  it("without exact dedupe, the job found is stopped and nothing is sent again", async () => {
    const p = landingAt(1500, jobSeam(caps(5000, { dedupe: undefined })));
    const out = await inFlight(p);
    expect(out.detail).toBe(
      "the start's process SIGKILLed at +1000 ms; another process's lookups answered none 6 times inside the declared inFlightMs 5000, then found it at +1500 ms",
    );
    expect(steps(p).slice(-2)).toEqual(["2 job.lookup", "4 job.stop"]);
  });

  it("asks every tenth of the bound once the process is killed, no more often than 200 ms and no less than 5 s", async () => {
    for (const [bound, step] of [
      [10_000, 1_000],
      [10_005, 1_000],
      [1_000, 200],
      [100, 200],
      [100_000, 5_000],
    ] as const) {
      const p = landingAt(3 * step, jobSeam(caps(bound)), { lookup: seesPending });
      await inFlight(p);
      expect(lookupTimes(p), `bound ${bound}`).toEqual([0, step, 2 * step, 3 * step]);
    }
  });

  it("passes a start that made nothing: none past the bound, and none again a while later", async () => {
    const p = plugin(jobSeam(caps(1000)), { start: never });
    const out = await inFlight(p);
    expect(out).toEqual({
      result: "pass",
      detail:
        "the start, its process SIGKILLed at +1000 ms, made nothing: lookups from another process answered none past the declared inFlightMs 1000 and again at +3200 ms (the kill came before the job was made)",
      evidence: [],
    });
    // A none at the bound itself is inside it.
    expect(lookupTimes(p)).toEqual([0, 200, 400, 600, 800, 1000, 1200, 3200]);
    expect(p.killed).toBe(1);
    expect(p.closed).toBe(1);
    expect(p.calls.filter((c) => c.method === "job.stop")).toEqual([]);
  });

  it("asks once more at most 10 s after the none past the bound", async () => {
    const p = plugin(jobSeam(caps(20_000)), { start: never });
    const out = await inFlight(p);
    expect(out.detail).toMatch(
      /^the start, its process SIGKILLed at \+1000 ms, made nothing: lookups from another process answered none past the declared inFlightMs 20000 and again at \+31000 ms/,
    );
    expect(lookupTimes(p).slice(-3)).toEqual([19_000, 21_000, 31_000]);
  });

  it("fails a none past the bound when the job came after all, showing each lookup, and stops the job", async () => {
    const p = landingAt(2000, jobSeam(caps(1000)));
    const f = await failure(inFlight(p));
    expect(f.detail).toBe(
      "inFlightMs is 1000, yet a job.lookup sent 1200 ms after the start was sent answered none, and the job was found at 3200 ms",
    );
    expect(f.evidence).toEqual([
      "start written at +0 ms; sender SIGKILLed at +1000 ms",
      ...[0, 200, 400, 600, 800, 1000, 1200].map((t) => `lookup sent at +${t} ms: ${none}`),
      `lookup sent at +3200 ms: ${found1}`,
    ]);
    expect(steps(p).at(-1)).toBe("4 job.stop");
    expect(p.calls.at(-1)?.params).toEqual({
      target: { ...p.targetOf(0), job: { ...p.targetOf(0).job, handle: "j1" } },
      key: p.calls[0]?.params.key,
    });
    expect(p.jobStates()).toEqual(["ended"]);
    expect(p.closed).toBe(1);
  });

  it("a start that had answered before the kill says so in the evidence", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(caps(1000)), {
      start: (_key, make) => {
        void p.at(2000).then(make);
        return p.at(400).then(() => {
          throw new ErrorReply("job.start", "unknown-outcome", "lost");
        });
      },
    });
    const f = await failure(inFlight(p));
    expect(f.evidence[0]).toBe(
      "start written at +0 ms; sender SIGKILLed at +1000 ms (the start had answered at +400 ms)",
    );
  });

  it("passes, naming what it saw, a lookup that never settles", async () => {
    const pending = plugin(jobSeam(caps(1000)), {
      start: never,
      lookup: () => ({ pending: true }),
    });
    expect((await inFlight(pending)).detail).toBe(
      `the start's process SIGKILLed at +0 ms; lookups from another process still answered {"pending":true} 31200 ms after the start was sent (not exercised: neither found nor none)`,
    );
    expect(lookupTimes(pending)).toHaveLength(157);
    const unknown = plugin(jobSeam(caps(1000)), {
      start: never,
      lookup: () => ({ unknown: "backend down" }),
    });
    expect((await inFlight(unknown)).detail).toBe(
      `the start's process SIGKILLed at +1000 ms; lookups from another process still answered {"unknown":"backend down"} 31200 ms after the start was sent (not exercised: neither found nor none)`,
    );
  });

  it("a lookup the plugin refuses fails the check, and the watcher is closed", async () => {
    const p = plugin(jobSeam(caps(1000)), {
      start: never,
      lookup: () => {
        throw refusal("job.lookup", "down");
      },
    });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe("job.lookup answered an error (permanent): down");
    expect(p.closed).toBe(1);
    // the sending start, cut short before its kill, is killed all the same
    expect(p.killed).toBe(1);
  });

  it("fails a start that answered with a job that lookups from another process never find, and stops the job", async () => {
    const p = plugin(jobSeam(caps(1000)), { lookup: () => ({ none: true }) });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe(
      "job.start answered with a job at +0 ms, yet job.lookup from another process answered none past the declared inFlightMs 1000 and again at +3200 ms",
    );
    expect(f.evidence[0]).toBe(
      "start written at +0 ms; sender SIGKILLed at +1000 ms (the start had answered at +0 ms)",
    );
    expect(f.evidence.at(-1)).toMatch(/^start: \{"handle":"j1"/);
    expect(p.jobStates()).toEqual(["ended"]);
    expect(steps(p).at(-1)).toMatch(/ job\.stop$/);
  });

  it("a provider's start goes to the machine the check acquired, released after", async () => {
    const q = landingAt(600, jobSeam(caps(1000)), { lookup: seesPending }, {});
    const out = await inFlight(q, { size: "s", harness: "codex" });
    expect(out.result).toBe("pass");
    expect(steps(q)[0]).toBe("1 host.acquire");
    expect(q.calls[0]?.params.params).toEqual({ size: "s", harness: "codex" });
    expect(q.targetOf(1).host).toEqual({ name: CHECK_HOST, handle: "m1", instance: INSTANCE });
    expect(q.calls[1]?.params.spec).toMatchObject({ harness: "codex", cmd: "codex" });
    expect(steps(q).at(-1)).toBe("1 host.release");
    expect(q.states()).toEqual(["gone"]);
  });
});

describe("the identical start, sent again from a new process", () => {
  it("fails a repeat that answers another handle than the one found, and stops both", async () => {
    const p = plugin(jobSeam(caps(1000)), {
      start: (_key, make, n) => (n === 2 ? { ...make(), handle: "j9" } : make()),
    });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe(
      "the identical job.start, sent from a new process after the one starting it was SIGKILLed, answered handle j9, not the j1 lookup found",
    );
    expect(f.evidence).toEqual([
      "start written at +0 ms; sender SIGKILLed at +0 ms (the start had answered at +0 ms)",
      `lookup sent at +0 ms: ${found1}`,
      'repeat: {"handle":"j9","view":{"command":"fake-attach j1","env":{}}}',
    ]);
    expect(steps(p).slice(2)).toEqual(["4 job.start", "5 job.stop", "6 job.stop"]);
    expect([p.targetOf(-2).job.handle, p.targetOf(-1).job.handle]).toEqual(["j1", "j9"]);
  });

  it("a repeat the plugin refuses fails the check, and the job found is stopped", async () => {
    const p = plugin(jobSeam(caps(1000)), {
      start: (_key, make, n) => {
        if (n === 2) throw refusal("job.start", "busy");
        return make();
      },
    });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe("a repeated job.start: job.start answered an error (permanent): busy");
    expect(steps(p).slice(-1)).toEqual(["5 job.stop"]);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("a pane kind's repeat names no handle: a lookup from the same process judges it", async () => {
    const p = plugin(jobSeam(caps(1000), { handle: "pane" }));
    const out = await inFlight(p);
    expect(out.detail).toMatch(/; the identical start from a new process returned the job found$/);
    expect(steps(p).slice(2)).toEqual(["4 job.start", "4 job.lookup", "5 job.stop"]);
    expect(p.calls[3]?.params).toEqual({
      target: p.targetOf(0),
      key: p.calls[0]?.params.key,
      fence: false,
    });
  });

  it("fails a pane kind's repeat that left lookup finding another handle, and stops both", async () => {
    let asked = 0;
    const p = plugin(jobSeam(caps(1000), { handle: "pane" }), {
      lookup: (_key, _j, _fence, answer) =>
        ++asked === 2 ? { found: { handle: "j7" } } : answer(),
    });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe(
      "the identical job.start, sent from a new process after the one starting it was SIGKILLed, left lookup finding handle j7, not the j1 lookup found",
    );
    expect(f.evidence.slice(-2)).toEqual([
      'repeat: {"view":{"command":"fake-attach j1","env":{}}}',
      'lookup after: {"found":{"handle":"j7"}}',
    ]);
    expect([p.targetOf(-2).job.handle, p.targetOf(-1).job.handle]).toEqual(["j1", "j7"]);
  });

  it("fails a pane kind's repeat after which lookup finds nothing, and stops only the job found", async () => {
    let asked = 0;
    const p = plugin(jobSeam(caps(1000), { handle: "pane" }), {
      lookup: (_key, _j, _fence, answer) => (++asked === 2 ? { none: true } : answer()),
    });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe(
      "the identical job.start, sent from a new process after the one starting it was SIGKILLed, left lookup finding handle undefined, not the j1 lookup found",
    );
    expect(f.evidence.at(-1)).toBe('lookup after: {"none":true}');
    expect(steps(p).slice(2)).toEqual(["4 job.start", "4 job.lookup", "5 job.stop"]);
  });

  it("fails a stop of the job found that does not answer null, and does not stop it again", async () => {
    const p = plugin(jobSeam(caps(1000)), { stop: () => ({ stopped: 1 }) });
    const f = await failure(inFlight(p));
    expect(f.detail).toBe('job.stop answered {"stopped":1}, not null');
    expect(p.calls.filter((c) => c.method === "job.stop")).toHaveLength(1);
  });
});
