import { describe, expect, it } from "vitest";
import {
  EFFECT_MS,
  jobIdempotency,
  jobLifecycle,
  type StartedJob,
  startCall,
  startJob,
  stopJob,
  withJob,
} from "../host/contract/job-seam.js";
import { CHECK_HOST, type Target } from "../host/contract/target.js";
import { CheckFailed } from "../host/contract/verdict.js";
import type { JobSeam, KeyCaps } from "../host/protocol/declaration.js";
import { ALL_CAPS, FakeJobPlugin, type JobHooks, jobSeam } from "./fake-job-plugin.js";
import { checkContext, failure, type Hooks, INSTANCE, perTest, refusal } from "./fake-provider.js";

// The job seam's own checks (start, status, stop, lookup, dedupe) and the
// helpers the replay and in-flight checks build on, in-process against
// fake-job-plugin.ts: each case gives the check one answer a job plugin can
// give and reads what the check sends, says and stops. The same checks
// against plugins on the wire are in test/contract-job-fixture.test.ts and,
// for a provider's jobs on a machine it acquired, test/contract.test.ts.

const plugin = perTest(
  (seam: JobSeam = jobSeam(), hooks: JobHooks = {}, provider?: Hooks) =>
    new FakeJobPlugin(seam, hooks, provider),
);

/** Where a plugin without a host seam runs its jobs: the profile's one backend. */
const HERE: Target = { host: { name: CHECK_HOST, instance: INSTANCE } };
const KEY = /^mu-check-r1-[0-9a-f]{8}$/;
const NO_LOOKUP: KeyCaps = { lookup: false, fenceKey: false };
const reply1 = '{"handle":"j1","view":{"command":"fake-attach j1","env":{}}}';

const started = async (p: FakeJobPlugin, seam = p.seam) =>
  (await startJob(p.session(), checkContext(), seam, HERE, {})).started;

const methods = (p: FakeJobPlugin) => p.calls.map((c) => c.method);

describe("the params of a job.start", () => {
  it("names a new agent in the check's workstream under a new key, with the spec of a harness agent", () => {
    const c = startCall(checkContext(), jobSeam(), HERE, {});
    expect(c.key).toMatch(KEY);
    expect(c.msgId).toMatch(/^msg-check-[0-9a-f]{12}$/);
    const name = c.spec.name;
    expect(name).toMatch(/^check-[0-9a-f]{6}$/);
    expect(c).toStrictEqual({
      target: {
        host: HERE.host,
        job: { kind: "fake", key: c.key },
        agent: { workstream: "mu-check", name, incarnation: 1 },
      },
      key: c.key,
      spec: {
        workstream: "mu-check",
        name,
        harness: "claude",
        role: "full-access",
        cmd: "claude",
        commandSource: "harness",
        cwd: ".",
        env: {},
      },
      msgId: c.msgId,
    });
  });

  it("each call is a new agent, key and msgId", () => {
    const a = startCall(checkContext(), jobSeam(), HERE, {});
    const b = startCall(checkContext(), jobSeam(), HERE, {});
    expect(b.key).not.toBe(a.key);
    expect(b.spec.name).not.toBe(a.spec.name);
    expect(b.msgId).not.toBe(a.msgId);
  });

  it("the harness param names the harness and, without a cmd param, the command", () => {
    const h = startCall(checkContext(), jobSeam(), HERE, { harness: "codex" }).spec;
    expect([h.harness, h.cmd]).toEqual(["codex", "codex"]);
    const c = startCall(checkContext(), jobSeam(), HERE, { harness: "codex", cmd: "codex-x" });
    expect([c.spec.harness, c.spec.cmd]).toEqual(["codex", "codex-x"]);
    const only = startCall(checkContext(), jobSeam(), HERE, { cmd: "my-claude" }).spec;
    expect([only.harness, only.cmd]).toEqual(["claude", "my-claude"]);
  });

  it("an at-start kind's spec carries the first prompt under the call's msgId", () => {
    const c = startCall(checkContext(), jobSeam(ALL_CAPS, { firstTurn: "at-start" }), HERE, {});
    expect(c.spec.firstPrompt).toEqual({
      text: "mu plugin check: reply with one word",
      msgId: c.msgId,
    });
    const onSend = startCall(checkContext(), jobSeam(ALL_CAPS, { firstTurn: "on-send" }), HERE, {});
    expect("firstPrompt" in onSend.spec).toBe(false);
  });

  it("takes the caller's key when given one", () => {
    const c = startCall(checkContext(), jobSeam(), HERE, {}, "k-given");
    expect(c.key).toBe("k-given");
    expect(c.target.job.key).toBe("k-given");
  });
});

describe("a job started by the check", () => {
  it("sends the call without its msgId, as an effect, and keeps the reply's handle on a copy of the target", async () => {
    const p = plugin();
    const { started, params } = await startJob(p.session(), checkContext(), p.seam, HERE, {});
    expect(p.calls).toEqual([{ method: "job.start", params }]);
    expect(p.timeouts).toEqual([EFFECT_MS]);
    expect(EFFECT_MS).toBe(60_000);
    expect(Object.keys(params)).toEqual(["target", "key", "spec"]);
    const key = params.key as string;
    expect(key).toMatch(KEY);
    const target = params.target as StartedJob["target"];
    // What a repeat must send again byte for byte: no handle in it.
    expect(target.job).toStrictEqual({ kind: "fake", key });
    expect(started).toStrictEqual({
      key,
      target: { ...target, job: { kind: "fake", key, handle: "j1" } },
      reply: { view: { command: "fake-attach j1", env: {} }, handle: "j1" },
      stopped: false,
    });
  });

  it("a pane kind's start names no handle, and the target carries none", async () => {
    const p = plugin(jobSeam(ALL_CAPS, { handle: "pane" }));
    const j = await started(p);
    expect(j.reply).toStrictEqual({ view: { command: "fake-attach j1", env: {} } });
    expect(j.target.job).toStrictEqual({ kind: "fake", key: j.key });
  });

  it("fails a reply kind's start that carries no handle", async () => {
    const p = plugin(jobSeam(), {
      start: (_key, make) => ({ view: make().view }),
    });
    const f = await failure(started(p));
    expect(f.detail).toBe("a reply kind's job.start carried no handle");
    expect(f.evidence).toEqual(['{"view":{"command":"fake-attach j1","env":{}}}']);
  });

  it("an at-start kind's start keeps its msgId, and passes with baseline runs 0", async () => {
    const p = plugin(jobSeam(ALL_CAPS, { firstTurn: "at-start" }));
    const { started, params } = await startJob(p.session(), checkContext(), p.seam, HERE, {});
    const spec = params.spec as { firstPrompt: { msgId: string } };
    expect(started.firstMsgId).toBe(spec.firstPrompt.msgId);
    expect(started.firstMsgId).toMatch(/^msg-check-[0-9a-f]{12}$/);
    expect(started.reply.baseline).toEqual({ runs: 0 });
  });

  it("fails an at-start start whose baseline is not runs 0, or is missing", async () => {
    const seam = jobSeam(ALL_CAPS, { firstTurn: "at-start" });
    const two = plugin(seam, { start: (_key, make) => ({ ...make(), baseline: { runs: 2 } }) });
    const f = await failure(started(two));
    expect(f.detail).toBe(
      'an at-start job.start answered baseline {"runs":2}, not one with runs 0',
    );
    expect(f.evidence).toEqual([
      '{"baseline":{"runs":2},"handle":"j1","view":{"command":"fake-attach j1","env":{}}}',
    ]);
    const none = plugin(seam, {
      start: (_key, make) => {
        const { baseline: _b, ...rest } = make();
        return rest;
      },
    });
    const g = await failure(started(none));
    expect(g.detail).toBe("an at-start job.start answered baseline null, not one with runs 0");
  });

  it("an on-send kind's baseline is not the check's business", async () => {
    const p = plugin(jobSeam(), { start: (_key, make) => ({ ...make(), baseline: { runs: 3 } }) });
    const j = await started(p);
    expect(j.reply.baseline).toEqual({ runs: 3 });
    expect("firstMsgId" in j).toBe(false);
  });

  it("a refused start fails the check with the plugin's words", async () => {
    const p = plugin(jobSeam(), {
      start: () => {
        throw refusal("job.start", "no capacity");
      },
    });
    const f = await failure(started(p));
    expect(f.detail).toBe("job.start answered an error (permanent): no capacity");
    expect(f.evidence).toEqual(["job.start answered an error (permanent): no capacity"]);
  });
});

describe("a job stopped by the check", () => {
  it("sends the job's target and key as an effect, and marks it stopped on null", async () => {
    const p = plugin();
    const j = await started(p);
    await stopJob(p.session(), j);
    expect(p.calls[1]).toEqual({ method: "job.stop", params: { target: j.target, key: j.key } });
    expect(p.timeouts[1]).toBe(EFFECT_MS);
    expect(j.stopped).toBe(true);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("a stop answering anything but null fails under the caller's name, the job counted stopped", async () => {
    const p = plugin(jobSeam(), { stop: () => ({ stopped: true }) });
    const j = await started(p);
    const f = await failure(stopJob(p.session(), j, "a late stop"));
    expect(f.detail).toBe('a late stop answered {"stopped":true}, not null');
    expect(f.evidence).toEqual(['{"stopped":true}']);
    expect(j.stopped).toBe(true);
    const g = await failure(stopJob(p.session(), j));
    expect(g.detail).toBe('job.stop answered {"stopped":true}, not null');
  });

  it("clips a long answer in the headline, never in the evidence", async () => {
    const long = "x".repeat(300);
    const p = plugin(jobSeam(), { stop: () => long });
    const f = await failure(stopJob(p.session(), await started(p)));
    expect(f.detail).toBe(`job.stop answered "${"x".repeat(239)}… (302 chars), not null`);
    expect(f.evidence).toEqual([`"${long}"`]);
  });

  it("a refused stop fails the check and leaves the job not stopped", async () => {
    const p = plugin(jobSeam(), {
      stop: () => {
        throw refusal("job.stop", "busy");
      },
    });
    const j = await started(p);
    const f = await failure(stopJob(p.session(), j, "a late stop"));
    expect(f.detail).toBe("a late stop: job.stop answered an error (permanent): busy");
    expect(j.stopped).toBe(false);
  });
});

describe("a check run with a job of its own", () => {
  it("gives the check the job and the start's params, and stops the job after", async () => {
    const p = plugin();
    const s = p.session();
    const seen: unknown[] = [];
    const out = await withJob(s, checkContext(), p.seam, HERE, {}, async (j, params) => {
      seen.push(j, params);
      return "done";
    });
    expect(out).toBe("done");
    const [j, params] = seen as [StartedJob, Record<string, unknown>];
    expect(p.calls).toEqual([
      { method: "job.start", params },
      { method: "job.stop", params: { target: j.target, key: j.key } },
    ]);
    expect(j.stopped).toBe(true);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("a job the check stopped itself is not stopped again", async () => {
    const p = plugin();
    const s = p.session();
    await withJob(s, checkContext(), p.seam, HERE, {}, (j) => stopJob(s, j));
    expect(methods(p)).toEqual(["job.start", "job.stop"]);
  });

  it("a check that fails still stops its job, and its failure is the one that surfaces", async () => {
    const p = plugin(jobSeam(), {
      stop: () => {
        throw refusal("job.stop", "busy");
      },
    });
    const s = p.session();
    const f = await failure(
      withJob(s, checkContext(), p.seam, HERE, {}, async () => {
        throw new CheckFailed("the check's own failure");
      }),
    );
    expect(f.detail).toBe("the check's own failure");
    expect(methods(p)).toEqual(["job.start", "job.stop"]);
  });

  it("a stop that fails after a check that passed is not the check's verdict", async () => {
    const p = plugin(jobSeam(), {
      stop: () => {
        throw refusal("job.stop", "busy");
      },
    });
    const out = await withJob(p.session(), checkContext(), p.seam, HERE, {}, async () => 7);
    expect(out).toBe(7);
  });

  it("a start that fails runs nothing and stops nothing", async () => {
    const p = plugin(jobSeam(), {
      start: () => {
        throw refusal("job.start", "no capacity");
      },
    });
    let ran = false;
    await failure(
      withJob(p.session(), checkContext(), p.seam, HERE, {}, async () => {
        ran = true;
      }),
    );
    expect(ran).toBe(false);
    expect(methods(p)).toEqual(["job.start"]);
  });
});

describe("the lifecycle check", () => {
  it("passes start, running, stop, ended, each asked of the job the start named", async () => {
    const p = plugin();
    const out = await jobLifecycle(checkContext(), p.session(), p.hello, {});
    expect(out).toEqual({
      result: "pass",
      detail: "started a job, status running, stopped it (null), status ended",
      evidence: [],
    });
    expect(methods(p)).toEqual(["job.start", "job.status", "job.stop", "job.status"]);
    const key = p.calls[0]?.params.key;
    const target = {
      host: HERE.host,
      job: { kind: "fake", key, handle: "j1" },
      agent: p.targetOf(0).agent,
    };
    expect(p.calls.slice(1).map((c) => c.params)).toEqual([
      { target },
      { target, key },
      { target },
    ]);
    // Reads wait the connection's read timeout; effects the longer one.
    expect(p.timeouts).toEqual([EFFECT_MS, undefined, EFFECT_MS, undefined]);
    expect(p.from).toEqual([1, 1, 1, 1]);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("asks status again every 250 ms while the job is on its way up", async () => {
    const p = plugin(jobSeam(), {
      status: (j, n) =>
        j?.state === "ended"
          ? { state: "ended", exit: 0 }
          : n < 3
            ? { state: "unknown", reason: "booting" }
            : { state: "running" },
    });
    const out = await jobLifecycle(checkContext(), p.session(), p.hello, {});
    expect(out.result).toBe("pass");
    const asked = p.calls.flatMap((c, i) => (c.method === "job.status" ? [p.times[i]] : []));
    expect(asked).toEqual([0, 250, 500, 500]);
  });

  it("fails a job that never reads running once 30 s have passed, and stops it", async () => {
    const p = plugin(jobSeam(), { status: () => ({ state: "unknown", reason: "slow" }) });
    const f = await failure(jobLifecycle(checkContext(), p.session(), p.hello, {}));
    expect(f.detail).toBe("job.status answered unknown for 30 s where running was due");
    expect(f.evidence).toEqual(['{"reason":"slow","state":"unknown"}']);
    const asked = p.calls.flatMap((c, i) => (c.method === "job.status" ? [p.times[i]] : []));
    expect(asked).toHaveLength(121);
    expect(asked.at(-1)).toBe(30_000);
    expect(methods(p).at(-1)).toBe("job.stop");
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("fails a job still running 30 s after its stop, stopping it only the once", async () => {
    const p = plugin(jobSeam(), { status: () => ({ state: "running" }) });
    const f = await failure(jobLifecycle(checkContext(), p.session(), p.hello, {}));
    expect(f.detail).toBe("job.status answered running for 30 s where ended was due");
    expect(f.evidence).toEqual(['{"state":"running"}']);
    expect(methods(p).filter((m) => m === "job.stop")).toHaveLength(1);
  });

  it("lost after the stop is as good as ended", async () => {
    const p = plugin(jobSeam(), {
      status: (j) =>
        j?.state === "ended" ? { state: "lost", reason: "gone" } : { state: "running" },
    });
    const out = await jobLifecycle(checkContext(), p.session(), p.hello, {});
    expect(out.result).toBe("pass");
  });

  it("a status call the plugin refuses fails the check, and the job is stopped", async () => {
    const p = plugin(jobSeam(), {
      status: () => {
        throw refusal("job.status", "no such job");
      },
    });
    const f = await failure(jobLifecycle(checkContext(), p.session(), p.hello, {}));
    expect(f.detail).toBe("job.status answered an error (permanent): no such job");
    expect(methods(p)).toEqual(["job.start", "job.status", "job.stop"]);
  });

  it("a stop answering other than null fails the check", async () => {
    const p = plugin(jobSeam(), { stop: () => ({}) });
    const f = await failure(jobLifecycle(checkContext(), p.session(), p.hello, {}));
    expect(f.detail).toBe("job.stop answered {}, not null");
  });

  it("a provider's job runs on a machine the check acquires with the author's params, released after", async () => {
    const p = plugin(jobSeam(), {}, {});
    await jobLifecycle(checkContext(), p.session(), p.hello, { size: "s" });
    expect(methods(p)).toEqual([
      "host.acquire",
      "job.start",
      "job.status",
      "job.stop",
      "job.status",
      "host.release",
    ]);
    const hostKey = p.calls[0]?.params.key;
    expect(hostKey).toMatch(KEY);
    expect(p.calls[0]?.params).toEqual({
      target: { host: { name: CHECK_HOST } },
      key: hostKey,
      params: { size: "s" },
    });
    const machine = { name: CHECK_HOST, handle: "m1", instance: INSTANCE };
    expect(p.targetOf(1).host).toEqual(machine);
    expect(p.calls[1]?.params.key).not.toBe(hostKey);
    expect(p.states()).toEqual(["gone"]);
  });
});

describe("the idempotency check", () => {
  it("with dedupe and lookup declared: a repeat, a lookup, two stops and a lookup of an unused key, each round", async () => {
    const p = plugin();
    const out = await jobIdempotency(checkContext(), p.session(), p.hello, {}, 2);
    expect(out.detail).toBe(
      "2 rounds: a second stop resolves; a repeat inside the 5000 ms window returns the first reply; lookup finds a started job and answers none for an unused key",
    );
    const round = ["job.start", "job.start", "job.lookup", "job.stop", "job.stop", "job.lookup"];
    expect(methods(p)).toEqual([...round, ...round]);
    const [start, repeat, lookup, stop, stop2, unused] = p.calls.map((c) => c.params);
    expect(repeat).toEqual(start);
    expect(p.timeouts.slice(0, 6)).toEqual([
      EFFECT_MS,
      EFFECT_MS,
      undefined,
      EFFECT_MS,
      EFFECT_MS,
      undefined,
    ]);
    const key = start?.key;
    const target = { ...(start?.target as object), job: { kind: "fake", key, handle: "j1" } };
    expect(lookup).toEqual({ target, key, fence: false });
    expect(stop).toEqual({ target, key });
    expect(stop2).toEqual({ target, key });
    expect(unused).toEqual({
      target: { host: HERE.host, job: { kind: "fake", key: expect.stringMatching(KEY) } },
      key: expect.stringMatching(KEY),
      fence: false,
    });
    // one key, in the target and beside it, as mu sends a lookup
    expect(unused?.target).toMatchObject({ job: { key: unused?.key } });
    const used = p.calls.map((c) => c.params.key);
    expect(used.filter((k) => k === unused?.key)).toHaveLength(1);
    expect(p.calls[6]?.params.key).not.toBe(key);
    expect(p.jobStates()).toEqual(["ended", "ended"]);
  });

  it("with neither declared: no repeat and no lookup are sent, and the pass says so", async () => {
    const p = plugin(jobSeam(NO_LOOKUP));
    const out = await jobIdempotency(checkContext(), p.session(), p.hello, {}, 1);
    expect(out.detail).toBe(
      "1 rounds: a second stop resolves; no dedupe declared; no lookup declared",
    );
    expect(methods(p)).toEqual(["job.start", "job.stop", "job.stop"]);
  });

  it("dedupe alone, and lookup alone, each say what they proved", async () => {
    const d = plugin(jobSeam({ ...NO_LOOKUP, dedupe: { exact: true, windowMs: 900 } }));
    expect((await jobIdempotency(checkContext(), d.session(), d.hello, {}, 1)).detail).toBe(
      "1 rounds: a second stop resolves; a repeat inside the 900 ms window returns the first reply; no lookup declared",
    );
    expect(methods(d)).toEqual(["job.start", "job.start", "job.stop", "job.stop"]);
    const l = plugin(jobSeam({ lookup: true, fenceKey: false }));
    expect((await jobIdempotency(checkContext(), l.session(), l.hello, {}, 1)).detail).toBe(
      "1 rounds: a second stop resolves; no dedupe declared; lookup finds a started job and answers none for an unused key",
    );
    expect(methods(l)).toEqual(["job.start", "job.lookup", "job.stop", "job.stop", "job.lookup"]);
  });

  it("fails a repeat that does not return the first reply, naming the round, and stops the job", async () => {
    let round = 0;
    const p = plugin(jobSeam(), {
      start: (_key, make, n) => {
        if (n === 1) round++;
        return round === 2 && n === 2 ? { ...make(), handle: "j9" } : make();
      },
    });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 2));
    expect(f.detail).toBe(
      "round 2 of 2: a repeat of job.start inside the 5000 ms dedupe window did not return the first reply",
    );
    expect(f.evidence).toEqual([
      'first: {"handle":"j2","view":{"command":"fake-attach j2","env":{}}}',
      'repeat: {"handle":"j9","view":{"command":"fake-attach j2","env":{}}}',
    ]);
    expect(methods(p).slice(6)).toEqual(["job.start", "job.start", "job.stop"]);
    expect(p.jobStates()).toEqual(["ended", "ended"]);
  });

  it("fails a repeated start the plugin refuses, naming it as the repeat", async () => {
    const p = plugin(jobSeam(), {
      start: (_key, make, n) => {
        if (n === 2) throw refusal("job.start", "busy");
        return make();
      },
    });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe(
      "round 1 of 1: a repeated job.start: job.start answered an error (permanent): busy",
    );
    expect(f.evidence).toEqual(["job.start answered an error (permanent): busy"]);
  });

  it("fails a lookup that does not find the started job", async () => {
    const p = plugin(jobSeam(), { lookup: () => ({ none: true }) });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe(
      'round 1 of 1: job.lookup of a started job answered {"none":true}, not found',
    );
    expect(f.evidence).toEqual([`start: ${reply1}`, 'lookup: {"none":true}']);
    expect(methods(p).at(-1)).toBe("job.stop");
  });

  it("fails a lookup that finds another handle than the start named", async () => {
    const p = plugin(jobSeam(), { lookup: () => ({ found: { handle: "j7" } }) });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe(
      'round 1 of 1: job.lookup of a started job answered {"found":{"handle":"j7"}}, not found',
    );
  });

  it("a pane kind's start names no handle, so any found will do", async () => {
    const p = plugin(jobSeam({ lookup: true, fenceKey: false }, { handle: "pane" }), {
      lookup: (_key, j) => (j ? { found: { handle: "whatever" } } : { none: true }),
    });
    const out = await jobIdempotency(checkContext(), p.session(), p.hello, {}, 1);
    expect(out.result).toBe("pass");
  });

  it("fails a stop that does not answer null, and does not stop again", async () => {
    const p = plugin(jobSeam(NO_LOOKUP), { stop: () => ({ gone: true }) });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe('round 1 of 1: job.stop answered {"gone":true}, not null');
    expect(methods(p)).toEqual(["job.start", "job.stop"]);
  });

  it("fails a second stop that does not resolve", async () => {
    const p = plugin(jobSeam(NO_LOOKUP), { stop: (_key, n) => (n === 1 ? null : { gone: true }) });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe(
      'round 1 of 1: a second job.stop of the stopped job answered {"gone":true}, not null',
    );
    expect(f.evidence).toEqual(['{"gone":true}']);
  });

  it("fails a lookup of a key never used that finds something", async () => {
    const p = plugin(jobSeam(), {
      lookup: (_key, j) => ({ found: { handle: j?.handle ?? "j9" } }),
    });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe(
      'round 1 of 1: job.lookup of a key never used answered {"found":{"handle":"j9"}}, not none',
    );
    expect(f.evidence).toEqual(['{"found":{"handle":"j9"}}']);
  });

  it("fails a lookup of a key never used that the plugin refuses", async () => {
    const p = plugin(jobSeam(), {
      lookup: (_key, j, _fence, answer) => {
        if (!j) throw refusal("job.lookup", "unsupported");
        return answer();
      },
    });
    const f = await failure(jobIdempotency(checkContext(), p.session(), p.hello, {}, 1));
    expect(f.detail).toBe("round 1 of 1: job.lookup answered an error (permanent): unsupported");
  });

  it("a provider's unused key is asked on the check's machine", async () => {
    const p = plugin(jobSeam(), {}, {});
    await jobIdempotency(checkContext(), p.session(), p.hello, {}, 1);
    expect(methods(p).at(-2)).toBe("job.lookup");
    expect(p.targetOf(-2).host).toEqual({
      name: CHECK_HOST,
      handle: "m1",
      instance: INSTANCE,
    });
    expect(methods(p).at(-1)).toBe("host.release");
  });
});
