import { describe, expect, it } from "vitest";
import { jobReplay } from "../host/contract/job-replay.js";
import { EFFECT_MS, type JobTarget } from "../host/contract/job-seam.js";
import { CHECK_HOST } from "../host/contract/target.js";
import { ErrorReply } from "../host/plugin/call-errors.js";
import type { JobSeam, KeyCaps } from "../host/protocol/declaration.js";
import {
  ALL_CAPS,
  FakeJobPlugin,
  type JobHooks,
  jobSeam,
  type StartReply,
} from "./fake-job-plugin.js";
import { checkContext, failure, type Hooks, INSTANCE, perTest, refusal } from "./fake-provider.js";

// The job seam as mu's replay meets it, in-process against
// fake-job-plugin.ts: every step after the start goes to a start of the
// plugin that never saw it, and a late start behind a fence goes to the
// oldest start. Each case gives the check one answer a job plugin can give;
// the same check against plugins on the wire (memory-dedupe, memory-jobs,
// forget-stopped, stop-in-memory, ignore-fence, fence-after-effect) is in
// test/contract-job-fixture.test.ts, and on a provider's machine in
// test/contract.test.ts.

const plugin = perTest(
  (seam: JobSeam = jobSeam(), hooks: JobHooks = {}, provider?: Hooks) =>
    new FakeJobPlugin(seam, hooks, provider),
);

const replay = (p: FakeJobPlugin, params: Record<string, string> = {}) =>
  jobReplay(checkContext(), p.session(), p.hello, params);

const NONE: KeyCaps = { lookup: false, fenceKey: false };
const LOOKUP: KeyCaps = { lookup: true, fenceKey: false };
const HERE = { name: CHECK_HOST, instance: INSTANCE };
const reply1 = '{"handle":"j1","view":{"command":"fake-attach j1","env":{}}}';
const found2 = '{"found":{"handle":"j2","view":{"command":"fake-attach j2","env":{}}}}';
const PASS = "each step from a new process, the one that started the job killed: ";

/** Each call as "<start> <method>", a fenced lookup so marked. */
const steps = (p: FakeJobPlugin) =>
  p.calls.map((c, i) => `${p.from[i]} ${c.method}${c.params.fence ? " fenced" : ""}`);
const methods = (p: FakeJobPlugin) => p.calls.map((c) => c.method);
const statusTimes = (p: FakeJobPlugin) =>
  p.calls.flatMap((c, i) => (c.method === "job.status" ? [p.times[i]] : []));

/** A start hook: correct for every key but a fenced one, where it does `late`. */
const lateStart =
  (p: () => FakeJobPlugin, late: (make: () => StartReply) => unknown): JobHooks["start"] =>
  (key, make) =>
    p().fenced.has(key) ? late(make) : make();

describe("the job seam's replay check", () => {
  it("with every cap declared: each step from a new process, then a late start behind a fence, refused", async () => {
    const p = plugin();
    const out = await replay(p);
    expect(out).toEqual({
      result: "pass",
      detail: `${PASS}the identical start returned the first reply; lookup found it running and stopped; a start after a fenced none was refused (permanent) and made nothing`,
      evidence: [],
    });
    expect(steps(p)).toEqual([
      "2 job.start",
      "3 job.start",
      "3 job.lookup",
      "3 job.status",
      "3 job.stop",
      "4 job.status",
      "4 job.lookup",
      "4 job.stop",
      "4 job.lookup fenced",
      // the oldest start, one that began before the fence
      "1 job.start",
      "1 job.lookup",
    ]);
    const [start, repeat, lookup, status, stop, , lookup2, stop2, fenced, late, after] =
      p.calls.map((c) => c.params);
    expect(repeat).toEqual(start);
    const key = start?.key;
    const target = { ...(start?.target as JobTarget), job: { kind: "fake", key, handle: "j1" } };
    expect(lookup).toEqual({ target, key, fence: false });
    expect(status).toEqual({ target });
    expect(stop).toEqual({ target, key });
    expect(lookup2).toEqual(lookup);
    expect(stop2).toEqual(stop);
    const fencedKey = fenced?.key;
    expect(fencedKey).not.toBe(key);
    const fencedTarget = fenced?.target as JobTarget;
    expect(fencedTarget.host).toEqual(HERE);
    expect(fencedTarget.job).toEqual({ kind: "fake", key: fencedKey });
    expect(Object.keys(late ?? {})).toEqual(["target", "key", "spec"]);
    expect(late?.target).toEqual(fencedTarget);
    expect(late?.key).toBe(fencedKey);
    expect(late?.spec).toMatchObject({ name: fencedTarget.agent.name });
    expect(after).toEqual({ target: fencedTarget, key: fencedKey, fence: false });
    expect(p.timeouts[9]).toBe(EFFECT_MS);
    expect(p.killed).toBe(3);
    expect(p.closed).toBe(0);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("with nothing declared: no repeat, lookup or fence, and the pass names what was not exercised", async () => {
    const p = plugin(jobSeam(NONE));
    const out = await replay(p);
    expect(out.detail).toBe(
      `${PASS}status read it running, and not after the stop (not exercised: no exact dedupe declared; no lookup declared)`,
    );
    expect(steps(p)).toEqual([
      "2 job.start",
      "3 job.status",
      "3 job.stop",
      "4 job.status",
      "4 job.stop",
    ]);
  });

  it("lookup without a fence key: found running and after the stop, and no fence tried", async () => {
    const p = plugin(jobSeam(LOOKUP));
    const out = await replay(p);
    expect(out.detail).toBe(
      `${PASS}lookup found it running and stopped (not exercised: no exact dedupe declared; no fenceKey declared)`,
    );
    expect(p.calls.filter((c) => c.params.fence === true)).toEqual([]);
    expect(methods(p)).toHaveLength(7);
  });

  it("a fence key without lookup fences nothing: there is no lookup to fence with", async () => {
    const p = plugin(jobSeam({ lookup: false, fenceKey: true }));
    const out = await replay(p);
    expect(out.detail).toBe(
      `${PASS}status read it running, and not after the stop (not exercised: no exact dedupe declared; no lookup declared)`,
    );
    expect(methods(p)).not.toContain("job.lookup");
  });

  it("exact dedupe alone: the repeat, and the pass says only lookup went unexercised", async () => {
    const p = plugin(jobSeam({ ...NONE, dedupe: { exact: true, windowMs: 10 } }));
    const out = await replay(p);
    expect(out.detail).toBe(
      `${PASS}the identical start returned the first reply; status read it running, and not after the stop (not exercised: no lookup declared)`,
    );
  });

  it("an at-start kind's repeat sends the first start's prompt and msgId again", async () => {
    const p = plugin(jobSeam(ALL_CAPS, { firstTurn: "at-start" }));
    await replay(p);
    const spec = p.calls[1]?.params.spec as { firstPrompt: { msgId: string } };
    expect(spec.firstPrompt.msgId).toMatch(/^msg-check-/);
    expect(p.calls[1]?.params).toEqual(p.calls[0]?.params);
  });

  it("a provider's job runs on a machine the check acquires, released after the late start", async () => {
    const p = plugin(jobSeam(), {}, {});
    await replay(p, { size: "s" });
    const machine = { ...HERE, handle: "m1" };
    expect(steps(p)[0]).toBe("1 host.acquire");
    expect(p.calls[0]?.params.params).toEqual({ size: "s" });
    expect(p.targetOf(1).host).toEqual(machine);
    expect(p.targetOf(9).host).toEqual(machine);
    expect(steps(p).slice(-3)).toEqual(["1 job.start", "1 job.lookup", "1 host.release"]);
    expect(p.states()).toEqual(["gone"]);
  });

  it("a start that fails leaves nothing to stop", async () => {
    const p = plugin(jobSeam(), {
      start: () => {
        throw refusal("job.start", "no capacity");
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe("job.start answered an error (permanent): no capacity");
    expect(steps(p)).toEqual(["2 job.start"]);
    expect(p.killed).toBe(1);
  });
});

describe("the steps from a new process", () => {
  it("fails a repeat that does not return the first reply, and stops the job from a start of its own", async () => {
    const p = plugin(jobSeam(), {
      start: (_key, make, n) => (n === 2 ? { ...make(), handle: "j9" } : make()),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "the identical job.start sent to a new process did not return the first reply",
    );
    expect(f.evidence).toEqual([
      `first: ${reply1}`,
      'repeat: {"handle":"j9","view":{"command":"fake-attach j1","env":{}}}',
    ]);
    expect(steps(p)).toEqual(["2 job.start", "3 job.start", "4 job.stop"]);
    expect(p.calls[2]?.params).toEqual({
      target: { ...p.targetOf(0), job: expect.anything() },
      key: p.calls[0]?.params.key,
    });
    expect(p.targetOf(2).job.handle).toBe("j1");
    expect(p.killed).toBe(3);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("fails a repeat the plugin refuses, naming it as the repeat, and stops the job", async () => {
    const p = plugin(jobSeam(), {
      start: (_key, make, n) => {
        if (n === 2) throw refusal("job.start", "busy");
        return make();
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe("a repeated job.start: job.start answered an error (permanent): busy");
    expect(steps(p)).toEqual(["2 job.start", "3 job.start", "4 job.stop"]);
  });

  it("fails a lookup while the job runs that does not find it, naming the handle", async () => {
    const p = plugin(jobSeam(), { lookup: () => ({ none: true }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      'job.lookup from a new process while the job runs answered {"none":true}, not found with handle j1',
    );
    expect(f.evidence).toEqual([`start: ${reply1}`, 'lookup: {"none":true}']);
    expect(methods(p).at(-1)).toBe("job.stop");
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("fails a lookup that finds another handle", async () => {
    const p = plugin(jobSeam(), { lookup: () => ({ found: { handle: "j4" } }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      'job.lookup from a new process while the job runs answered {"found":{"handle":"j4"}}, not found with handle j1',
    );
  });

  it("a pane kind names no handle: any found will do, and a none names none", async () => {
    const pane = jobSeam(LOOKUP, { handle: "pane" });
    const any = plugin(pane, {
      lookup: (_key, j) => (j ? { found: { handle: "other" } } : { none: true }),
    });
    expect((await replay(any)).result).toBe("pass");
    const none = plugin(pane, { lookup: () => ({ none: true }) });
    const f = await failure(replay(none));
    expect(f.detail).toBe(
      'job.lookup from a new process while the job runs answered {"none":true}, not found',
    );
  });

  it("waits through unknown until the job reads running, every 250 ms", async () => {
    const p = plugin(jobSeam(NONE), {
      status: (j, n) =>
        j?.state === "ended"
          ? { state: "ended", exit: 0 }
          : n < 3
            ? { state: "unknown", reason: "booting" }
            : { state: "running" },
    });
    expect((await replay(p)).result).toBe("pass");
    expect(statusTimes(p)).toEqual([0, 250, 500, 500]);
  });

  it("fails a job read ended before the stop, at once, and stops it", async () => {
    const p = plugin(jobSeam(NONE), { status: () => ({ state: "ended", exit: 0 }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "job.status from a new process answered ended for the job the killed process started",
    );
    expect(f.evidence).toEqual(['{"exit":0,"state":"ended"}']);
    expect(steps(p)).toEqual(["2 job.start", "3 job.status", "4 job.stop"]);
  });

  it("fails a job that reads unknown for 30 s", async () => {
    const p = plugin(jobSeam(NONE), { status: () => ({ state: "unknown", reason: "slow" }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "job.status from a new process answered unknown for the job the killed process started",
    );
    expect(statusTimes(p)).toHaveLength(121);
    expect(statusTimes(p).at(-1)).toBe(30_000);
  });

  it("fails a stop that does not answer null, and does not stop again", async () => {
    const p = plugin(jobSeam(NONE), { stop: () => ({ stopped: true }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe('job.stop answered {"stopped":true}, not null');
    expect(methods(p).filter((m) => m === "job.stop")).toHaveLength(1);
  });

  it("a refused stop fails the check, and the job is stopped again from another start", async () => {
    const p = plugin(jobSeam(NONE), {
      stop: (_key, n) => {
        if (n === 1) throw refusal("job.stop", "busy");
        return null;
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe("job.stop answered an error (permanent): busy");
    expect(steps(p).slice(-2)).toEqual(["3 job.stop", "4 job.stop"]);
  });

  it("a clean-up stop that fails does not hide the check's failure", async () => {
    const p = plugin(jobSeam(), {
      start: (_key, make, n) => (n === 2 ? { ...make(), handle: "j9" } : make()),
      stop: () => {
        throw refusal("job.stop", "busy");
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "the identical job.start sent to a new process did not return the first reply",
    );
  });
});

describe("after the stop, from yet another process", () => {
  it("fails a job read running after its stop answered null", async () => {
    const p = plugin(jobSeam(NONE), { status: () => ({ state: "running" }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "job.stop answered null, yet job.status from a new process reads running",
    );
    expect(f.evidence).toEqual(['{"state":"running"}']);
    expect(statusTimes(p)).toEqual([0, 0]);
    expect(methods(p).filter((m) => m === "job.stop")).toHaveLength(1);
  });

  it("fails a job read unknown for 30 s after its stop", async () => {
    const p = plugin(jobSeam(NONE), {
      status: (j) =>
        j?.state === "ended" ? { state: "unknown", reason: "slow" } : { state: "running" },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "after job.stop answered null, job.status from a new process read unknown for 30 s",
    );
    expect(f.evidence).toEqual(['{"reason":"slow","state":"unknown"}']);
    const after = statusTimes(p).slice(1);
    expect(after).toHaveLength(121);
    expect(after.at(-1)).toBe(30_000);
  });

  it("lost is as good as ended, and unknown on the way there is waited for", async () => {
    const lost = plugin(jobSeam(NONE), {
      status: (j) =>
        j?.state === "ended" ? { state: "lost", reason: "gone" } : { state: "running" },
    });
    expect((await replay(lost)).result).toBe("pass");
    const slow = plugin(jobSeam(NONE), {
      status: (j, n) =>
        j?.state !== "ended"
          ? { state: "running" }
          : n < 4
            ? { state: "unknown", reason: "stopping" }
            : { state: "ended", exit: 0 },
    });
    expect((await replay(slow)).result).toBe("pass");
    expect(statusTimes(slow)).toEqual([0, 0, 250, 500]);
  });

  it("fails a lookup after the stop that forgot the job", async () => {
    const p = plugin(jobSeam(LOOKUP), {
      lookup: (_key, j) =>
        j?.state === "running" ? { found: { handle: j.handle } } : { none: true },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      'job.lookup from a new process after the job was stopped answered {"none":true}, not found with handle j1',
    );
    expect(f.evidence).toEqual([`start: ${reply1}`, 'lookup: {"none":true}']);
  });

  it("fails a second stop from a new process that does not resolve", async () => {
    const p = plugin(jobSeam(NONE), { stop: (_key, n) => (n === 1 ? null : { gone: true }) });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      'a job.stop from a new process of the stopped job answered {"gone":true}, not null',
    );
  });

  it("fails a fenced lookup of a key never used that answers other than none, and starts nothing late", async () => {
    const p = plugin(jobSeam(), {
      lookup: (_key, _j, fence, answer) => (fence ? { pending: true } : answer()),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      'a fenced job.lookup of a key never used answered {"pending":true}, not none',
    );
    expect(f.evidence).toEqual(['{"pending":true}']);
    expect(steps(p).at(-1)).toBe("4 job.lookup fenced");
  });

  it("fails a fenced lookup the plugin refuses, naming it as fenced", async () => {
    const p = plugin(jobSeam(), {
      lookup: (_key, _j, fence, answer) => {
        if (fence) throw refusal("job.lookup", "no fences here");
        return answer();
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a fenced job.lookup: job.lookup answered an error (permanent): no fences here",
    );
  });
});

describe("a start behind a fenced none, from the oldest start", () => {
  it("fails one that takes effect, and stops its job by the handle it answered", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        (make) => make(),
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a job.start after a fenced job.lookup of its key answered none took effect",
    );
    expect(f.evidence).toEqual([
      'start: {"handle":"j2","view":{"command":"fake-attach j2","env":{}}}',
      `lookup after: ${found2}`,
    ]);
    const late = p.calls[9]?.params;
    expect(steps(p).slice(9)).toEqual(["1 job.start", "1 job.lookup", "1 job.stop"]);
    const target = late?.target as JobTarget;
    expect(p.calls[11]?.params).toEqual({
      target: { ...target, job: { ...target.job, handle: "j2" } },
      key: late?.key,
    });
    expect(target.job.handle).toBeUndefined();
    expect(p.timeouts[11]).toBe(EFFECT_MS);
    expect(p.jobStates()).toEqual(["ended", "ended"]);
  });

  it("a start that answered but made nothing is still stopped, by the handle it answered", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        () => ({ view: { command: "x", env: {} }, handle: "j5" }),
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a job.start after a fenced job.lookup of its key answered none took effect",
    );
    expect(f.evidence).toEqual([
      'start: {"handle":"j5","view":{"command":"x","env":{}}}',
      'lookup after: {"none":true}',
    ]);
    expect(p.targetOf(-1).job.handle).toBe("j5");
  });

  it("a start that answered no handle is stopped by its key alone", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        () => ({ view: { command: "x", env: {} } }),
      ),
    });
    await failure(replay(p));
    expect(methods(p).at(-1)).toBe("job.stop");
    expect("handle" in p.targetOf(-1).job).toBe(false);
  });

  it("a stop of the late job that fails does not change the verdict", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        (make) => make(),
      ),
      stop: (key) => {
        if (p.fenced.has(key)) throw refusal("job.stop", "busy");
        return null;
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a job.start after a fenced job.lookup of its key answered none took effect",
    );
  });

  it("fails one refused as permanent whose job a lookup then finds, stopped by the found handle", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        (make) => {
          make();
          throw refusal("job.start", "fenced");
        },
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a fenced job.start answered permanent, which says nothing happened, yet job.lookup then found the job",
    );
    expect(f.evidence).toEqual([
      "job.start answered an error (permanent): fenced",
      `lookup after: ${found2}`,
    ]);
    expect(p.targetOf(-1).job.handle).toBe("j2");
    expect(p.jobStates()).toEqual(["ended", "ended"]);
  });

  it("fails one refused as retryable whose job a lookup then finds", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        (make) => {
          make();
          throw new ErrorReply("job.start", "retryable", "busy");
        },
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a fenced job.start answered retryable, which says nothing happened, yet job.lookup then found the job",
    );
  });

  it("fails one that answers an error promising nothing, yet made a job", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        (make) => {
          make();
          throw new ErrorReply("job.start", "unknown-outcome", "lost");
        },
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe(
      "a job.start after a fenced job.lookup of its key answered none made a job",
    );
    expect(f.evidence).toEqual([
      "job.start answered an error (unknown-outcome): lost",
      `lookup after: ${found2}`,
    ]);
    expect(p.jobStates()).toEqual(["ended", "ended"]);
  });

  it("fails one that gets no answer, saying why, and asks nothing more", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      start: lateStart(
        () => p,
        () => {
          throw new Error("the plugin closed its stdout");
        },
      ),
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe("the plugin closed its stdout");
    expect(f.evidence).toEqual(["the plugin closed its stdout"]);
    expect(steps(p).at(-1)).toBe("1 job.start");
  });

  it("fails when the lookup after a refused late start is refused too", async () => {
    const p: FakeJobPlugin = plugin(jobSeam(), {
      lookup: (key, _j, fence, answer) => {
        if (p.fenced.has(key) && !fence) throw refusal("job.lookup", "down");
        return answer();
      },
    });
    const f = await failure(replay(p));
    expect(f.detail).toBe("job.lookup answered an error (permanent): down");
    expect(steps(p).slice(-2)).toEqual(["1 job.start", "1 job.lookup"]);
  });

  it("passes one refused as retryable, or with an unknown outcome, that made nothing, naming the kind", async () => {
    for (const kind of ["retryable", "unknown-outcome"] as const) {
      const p: FakeJobPlugin = plugin(jobSeam(), {
        start: lateStart(
          () => p,
          () => {
            throw new ErrorReply("job.start", kind, "not now");
          },
        ),
      });
      const out = await replay(p);
      expect(out.detail).toBe(
        `${PASS}the identical start returned the first reply; lookup found it running and stopped; a start after a fenced none was refused (${kind}) and made nothing`,
      );
      expect(methods(p).at(-1)).toBe("job.lookup");
    }
  });
});
