import { describe, expect, it } from "vitest";
import { channelControls } from "../host/contract/channel-controls.js";
import { EFFECT_MS, type JobTarget } from "../host/contract/job-seam.js";
import { ErrorReply, NoAnswer } from "../host/plugin/call-errors.js";
import type { ChannelSeam, JobSeam } from "../host/protocol/declaration.js";
import {
  ALL_ON,
  CHANNEL,
  type ChannelHooks,
  FakeChannelPlugin,
  TURN_MS,
} from "./fake-channel-plugin.js";
import { ALL_CAPS, jobSeam } from "./fake-job-plugin.js";
import { checkContext, failure, perTest, refusal } from "./fake-provider.js";

// The channel.controls check of `mu plugin check` (fresh, a send with a
// stale expectIncarnation refused, command, interrupt, abort, answer),
// in-process against fake-channel-plugin.ts on a virtual clock: each case
// gives the check one answer a channel can give and reads what the check
// sends and says. The real-process runs, against a plugin on the wire, are
// in test/contract-channel-fixture.test.ts.

const made = perTest(
  (caps: ChannelSeam["caps"], hooks: ChannelHooks, seam?: JobSeam) =>
    new FakeChannelPlugin(caps, hooks, seam),
);
const plugin = (caps: Partial<ChannelSeam["caps"]> = {}, hooks: ChannelHooks = {}) =>
  made({ ...ALL_ON, ...caps } as ChannelSeam["caps"], hooks);

const controls = (p: FakeChannelPlugin) =>
  channelControls(checkContext(), p.session(), p.hello, {});

/** Each call as "<virtual ms> <method>", a run of identical lines kept once. */
const trail = (p: FakeChannelPlugin) =>
  p.calls.map((c, i) => `${p.times[i]} ${c.method}`).filter((line, i, all) => line !== all[i - 1]);

/** The params of the nth call of a method (from 1), without the target every call carries. */
function sent(p: FakeChannelPlugin, method: string, n = 1) {
  const c = p.calls.filter((x) => x.method === method)[n - 1];
  if (!c) throw new Error(`no call ${n} of ${method}`);
  const { target: _t, ...rest } = c.params;
  return rest;
}

/** The timeout each call of a method was sent with. */
const timeoutsOf = (p: FakeChannelPlugin, method: string) =>
  p.calls.flatMap((c, i) => (c.method === method ? [p.timeouts[i]] : []));

const MSG = /^msg-check-[0-9a-f]{12}$/;
const ALL_PASS =
  "fresh; a send with expectIncarnation 1 refused, nothing delivered; command; interrupt; abort; answer";
const STALE_1 = "channel.send with expectIncarnation 1, not the agent's incarnation";

describe("a correct channel passes channel.controls", () => {
  it("with every control declared: each is exercised, in order, on the virtual clock", async () => {
    const p = plugin();
    expect(await controls(p)).toEqual({ result: "pass", detail: ALL_PASS, evidence: [] });
    expect(trail(p)).toEqual([
      "0 job.start",
      "0 channel.baseline",
      "0 channel.fresh",
      "0 channel.baseline",
      "100 channel.baseline",
      "200 channel.baseline",
      // The fresh turn settles; then the incarnation it moved to, then the count before the stale send.
      "300 channel.baseline",
      "300 channel.send",
      // Nothing may settle in the quiet second after a refusal.
      "1300 channel.baseline",
      "1300 channel.command",
      "1300 channel.send",
      "1300 channel.baseline",
      "1300 channel.interrupt",
      "1300 channel.baseline",
      "1400 channel.baseline",
      "1500 channel.baseline",
      "1600 channel.baseline",
      "1600 channel.send",
      "1600 channel.abort",
      "1600 channel.answer",
      "1600 job.stop",
    ]);
    expect(p.calls.map((c) => c.method).filter((m) => m === "channel.baseline")).toHaveLength(13);
    // Every channel call names the started job's agent, with the handle its start answered.
    const start = p.calls[0]?.params.target as JobTarget;
    const target = { ...start, job: { ...start.job, handle: "j1" } };
    for (const c of p.calls.slice(1, -1)) expect(c.params.target).toEqual(target);
    expect(p.agents.get(`mu-check/${start.agent.name}`)).toEqual({
      ref: `mu-check/${start.agent.name}`,
      incarnation: 2,
      runs: 2,
      turns: [],
    });
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("sends each control the params and timeouts the spec names", async () => {
    const p = plugin();
    await controls(p);
    const fresh = sent(p, "channel.fresh");
    expect(fresh).toEqual({
      text: "mu plugin check: a new conversation; reply with one word",
      msgId: fresh.msgId,
      force: false,
    });
    expect(fresh.msgId).toMatch(MSG);
    // After a fresh, a send is not the agent's first prompt.
    const stale = sent(p, "channel.send", 1);
    expect(stale).toEqual({
      text: "mu plugin check: reply with one word",
      msgId: stale.msgId,
      mode: "followUp",
      force: false,
      firstPrompt: false,
      expectIncarnation: 1,
    });
    expect(stale.msgId).toMatch(MSG);
    expect(sent(p, "channel.command")).toEqual({ name: "help", force: false });
    const beforeInterrupt = sent(p, "channel.send", 2);
    expect(beforeInterrupt).toEqual({
      text: "mu plugin check: reply with one word",
      msgId: beforeInterrupt.msgId,
      mode: "followUp",
      force: false,
      firstPrompt: false,
    });
    const interrupt = sent(p, "channel.interrupt");
    expect(interrupt).toEqual({
      text: "mu plugin check: stop; reply with one word",
      msgId: interrupt.msgId,
      timeoutMs: 10_000,
    });
    expect(interrupt.msgId).toMatch(MSG);
    expect(sent(p, "channel.send", 3)).toMatchObject({ firstPrompt: false, mode: "followUp" });
    expect(sent(p, "channel.abort")).toEqual({ timeoutMs: 10_000 });
    expect(sent(p, "channel.answer")).toEqual({ keys: ["Escape"], force: true });
    const ids = [fresh, stale, beforeInterrupt, interrupt, sent(p, "channel.send", 3)].map(
      (x) => x.msgId,
    );
    expect(new Set(ids).size).toBe(5);
    // Deliveries are effects; the reads go with the connection's own timeout.
    expect(EFFECT_MS).toBe(60_000);
    expect(timeoutsOf(p, "channel.fresh")).toEqual([EFFECT_MS]);
    expect(timeoutsOf(p, "channel.send")).toEqual([EFFECT_MS, EFFECT_MS, EFFECT_MS]);
    expect(timeoutsOf(p, "channel.command")).toEqual([EFFECT_MS]);
    expect(timeoutsOf(p, "channel.interrupt")).toEqual([EFFECT_MS]);
    expect(timeoutsOf(p, "channel.abort")).toEqual([70_000]);
    expect(timeoutsOf(p, "channel.answer")).toEqual([EFFECT_MS]);
    expect(new Set(timeoutsOf(p, "channel.baseline"))).toEqual(new Set([undefined]));
  });

  it("names each control left undeclared, and never calls it", async () => {
    const cases: [Partial<ChannelSeam["caps"]>, string, string][] = [
      [
        { fresh: "respawn" },
        "a send with expectIncarnation 2 refused, nothing delivered; command; interrupt; abort; answer; not declared: fresh",
        "channel.fresh",
      ],
      [
        { command: false },
        "fresh; a send with expectIncarnation 1 refused, nothing delivered; interrupt; abort; answer; not declared: command",
        "channel.command",
      ],
      [
        { interrupt: "none" },
        "fresh; a send with expectIncarnation 1 refused, nothing delivered; command; answer; not declared: interrupt and abort",
        "channel.interrupt",
      ],
      [
        { answer: false },
        "fresh; a send with expectIncarnation 1 refused, nothing delivered; command; interrupt; abort; not declared: answer",
        "channel.answer",
      ],
    ];
    for (const [caps, detail, never] of cases) {
      const p = plugin(caps);
      expect((await controls(p)).detail).toBe(detail);
      expect(p.calls.map((c) => c.method)).not.toContain(never);
    }
    const noInterrupt = plugin({ interrupt: "none" });
    await controls(noInterrupt);
    expect(noInterrupt.calls.map((c) => c.method)).not.toContain("channel.abort");
  });

  it("with nothing declared, only the stale send runs: into the incarnation after the agent's", async () => {
    const p = plugin({ fresh: "none", command: false, interrupt: "none", answer: false });
    expect(await controls(p)).toEqual({
      result: "pass",
      detail:
        "a send with expectIncarnation 2 refused, nothing delivered; not declared: fresh, command, interrupt and abort, answer",
      evidence: [],
    });
    expect(trail(p)).toEqual([
      "0 job.start",
      "0 channel.baseline",
      "0 channel.send",
      "1000 channel.baseline",
      "1000 job.stop",
    ]);
    // No delivery before it: the stale send is the agent's first prompt.
    expect(sent(p, "channel.send")).toMatchObject({ firstPrompt: true, expectIncarnation: 2 });
  });

  it("a refused stale send leaves the first prompt to the next send, which is the agent's first delivery", async () => {
    const p = plugin({ fresh: "none", command: false, answer: false });
    expect((await controls(p)).result).toBe("pass");
    expect(sent(p, "channel.send", 1)).toMatchObject({ firstPrompt: true, expectIncarnation: 2 });
    expect(sent(p, "channel.send", 2)).toMatchObject({ firstPrompt: true });
    expect(sent(p, "channel.send", 2)).not.toHaveProperty("expectIncarnation");
  });

  it("any value of a cap but the declared one counts as off; interrupt is on unless none", async () => {
    const p = plugin({ fresh: "none", command: "yes", answer: 1, interrupt: "emulated" });
    expect((await controls(p)).detail).toBe(
      "a send with expectIncarnation 2 refused, nothing delivered; interrupt; abort; not declared: fresh, command, answer",
    );
  });

  it("a fresh that keeps the incarnation makes the stale send aim past it", async () => {
    const p = plugin(
      {},
      {
        "channel.fresh": (answer, _p, a) => {
          const r = answer();
          a.incarnation = 1;
          return r;
        },
      },
    );
    expect((await controls(p)).detail).toBe(
      "fresh; a send with expectIncarnation 2 refused, nothing delivered; command; interrupt; abort; answer",
    );
  });

  it("an at-start kind's check begins once the first turn has settled", async () => {
    const p = made(ALL_ON, {}, jobSeam(ALL_CAPS, { firstTurn: "at-start" }));
    expect((await controls(p)).detail).toBe(ALL_PASS);
    expect(trail(p).slice(0, 6)).toEqual([
      "0 job.start",
      "0 channel.baseline",
      "100 channel.baseline",
      "200 channel.baseline",
      `${TURN_MS} channel.baseline`,
      `${TURN_MS} channel.fresh`,
    ]);
  });

  it("fails a plugin that declares no channel seam", async () => {
    const p = plugin();
    delete p.hello.seams.channel;
    const f = await failure(controls(p));
    expect(f.detail).toBe("the plugin declares no channel seam");
    expect(p.calls).toEqual([]);
  });
});

describe("the incarnation the check starts from", () => {
  /** A baseline that names no incarnation, as the spec allows. */
  const bare: ChannelHooks = {
    "channel.baseline": (answer) => ({ runs: (answer() as { runs: number }).runs }),
  };

  it("is asked of readStates, for the agent alone, when baseline names none", async () => {
    const p = plugin({}, bare);
    expect((await controls(p)).detail).toBe(ALL_PASS);
    const start = p.calls[0]?.params.target as JobTarget;
    const ref = `mu-check/${start.agent.name}`;
    expect(p.calls.filter((c) => c.method === "channel.readStates")).toHaveLength(2);
    expect(sent(p, "channel.readStates")).toEqual({ targets: [ref] });
    expect(trail(p).slice(0, 4)).toEqual([
      "0 job.start",
      "0 channel.baseline",
      "0 channel.readStates",
      "0 channel.fresh",
    ]);
    expect(timeoutsOf(p, "channel.readStates")).toEqual([undefined, undefined]);
  });

  it("a null baseline reads as no incarnation too", async () => {
    const p = plugin(
      { fresh: "none" },
      { "channel.baseline": (answer, _p, _a, n) => (n === 1 ? null : answer()) },
    );
    expect((await controls(p)).detail).toContain("a send with expectIncarnation 2 refused");
    expect(trail(p).slice(0, 3)).toEqual([
      "0 job.start",
      "0 channel.baseline",
      "0 channel.readStates",
    ]);
  });

  it("is not asked of readStates when baseline names it, even as 0", async () => {
    const p = plugin(
      { fresh: "none" },
      {
        "channel.baseline": (answer) => ({ ...(answer() as object), incarnation: 0 }),
        "channel.send": (answer, p) => {
          if (p.expectIncarnation !== undefined) throw refusal("channel.send", "stale");
          return answer();
        },
      },
    );
    expect((await controls(p)).detail).toContain("a send with expectIncarnation 1 refused");
    expect(p.calls.map((c) => c.method)).not.toContain("channel.readStates");
  });

  it("fails when neither baseline nor readStates names it", async () => {
    const p = plugin({}, { ...bare, "channel.readStates": () => ({}) });
    const f = await failure(controls(p));
    expect(f.detail).toBe("neither channel.baseline nor channel.readStates named the incarnation");
    expect(f.evidence).toEqual(["{}"]);
    expect(p.jobStates()).toEqual(["ended"]);
  });

  it("fails a readStates reading of the agent without an incarnation", async () => {
    const p = plugin(
      {},
      {
        ...bare,
        "channel.readStates": (_answer, _p, a) => ({ [a.ref]: { state: "idle", runs: 0 } }),
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("neither channel.baseline nor channel.readStates named the incarnation");
    expect(f.evidence).toEqual([`{"${p.agents.keys().next().value}":{"runs":0,"state":"idle"}}`]);
  });

  it("fails a readStates that answers an error", async () => {
    const p = plugin(
      {},
      {
        ...bare,
        "channel.readStates": () => {
          throw refusal("channel.readStates", "no such agent");
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.readStates answered an error (permanent): no such agent");
    expect(f.evidence).toEqual(["channel.readStates answered an error (permanent): no such agent"]);
  });

  it("the second reading, after the fresh, comes from readStates too", async () => {
    const p = plugin(
      {},
      {
        "channel.baseline": (answer, _p, _a, n) =>
          n === 1 ? answer() : { runs: (answer() as { runs: number }).runs },
        "channel.readStates": () => ({}),
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("neither channel.baseline nor channel.readStates named the incarnation");
    expect(trail(p)).toContain("300 channel.readStates");
  });
});

describe("channel.fresh", () => {
  it("fails a reply naming another msgId", async () => {
    const p = plugin(
      {},
      { "channel.fresh": (answer) => ({ ...(answer() as object), msgId: "m-x" }) },
    );
    const f = await failure(controls(p));
    const id = sent(p, "channel.fresh").msgId;
    expect(f.detail).toBe(
      `channel.fresh answered channel ${CHANNEL} and msgId m-x, not ${CHANNEL} and ${id}`,
    );
    expect(f.evidence).toEqual([
      `sent msgId ${id}`,
      `{"ack":"confirmed","baseline":0,"channel":"${CHANNEL}","msgId":"m-x"}`,
    ]);
  });

  it("fails a fresh that is refused", async () => {
    const p = plugin(
      {},
      {
        "channel.fresh": () => {
          throw refusal("channel.fresh", "busy");
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.fresh answered an error (permanent): busy");
  });

  it("fails a fresh whose turn never settles", async () => {
    const p = plugin(
      {},
      {
        "channel.fresh": (answer, _p, a) => {
          const r = answer();
          a.turns = [];
          return r;
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(
      "channel.fresh's turn did not settle within 120 s: channel.baseline still reads runs 0, not 1",
    );
    expect(f.evidence).toEqual(['{"incarnation":2,"runs":0}']);
  });

  it("waits from the baseline the fresh answered, 0 when it answers none", async () => {
    const none = plugin(
      {},
      {
        "channel.fresh": (answer) => {
          const { baseline: _b, ...r } = answer() as Record<string, unknown>;
          return r;
        },
      },
    );
    expect((await controls(none)).detail).toBe(ALL_PASS);
    const one = plugin(
      {},
      { "channel.fresh": (answer) => ({ ...(answer() as object), baseline: 1 }) },
    );
    const f = await failure(controls(one));
    expect(f.detail).toBe(
      "channel.fresh's turn did not settle within 120 s: channel.baseline still reads runs 1, not 2",
    );
  });
});

describe("a send with a stale expectIncarnation", () => {
  const staleSend = (hook: ChannelHooks[string]): ChannelHooks => ({
    "channel.send": (answer, p, a, n) =>
      p.expectIncarnation !== undefined && hook ? hook(answer, p, a, n) : answer(),
  });

  it("passes a refusal of any kind but unknown-outcome", async () => {
    for (const kind of ["retryable", "human"] as const) {
      const p = plugin(
        {},
        staleSend(() => {
          throw new ErrorReply("channel.send", kind, "try later");
        }),
      );
      expect((await controls(p)).detail).toBe(ALL_PASS);
    }
  });

  it("fails one answered instead of refused", async () => {
    const p = plugin(
      {},
      staleSend((_answer, p) => ({
        channel: CHANNEL,
        ack: "confirmed",
        baseline: 1,
        msgId: p.msgId,
      })),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(`${STALE_1}, was answered, not refused`);
    expect(f.evidence).toEqual([
      `{"ack":"confirmed","baseline":1,"channel":"${CHANNEL}","msgId":"${sent(p, "channel.send").msgId}"}`,
    ]);
  });

  it("fails one answered null", async () => {
    const p = plugin(
      {},
      staleSend(() => null),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(`${STALE_1}, was answered, not refused`);
    expect(f.evidence).toEqual(["null"]);
  });

  it("names the incarnation it aimed at when no fresh ran", async () => {
    const p = plugin(
      { fresh: "none" },
      staleSend(() => null),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(
      "channel.send with expectIncarnation 2, not the agent's incarnation, was answered, not refused",
    );
  });

  it("fails one answered unknown-outcome", async () => {
    const p = plugin(
      {},
      staleSend(() => {
        throw new ErrorReply("channel.send", "unknown-outcome", "lost the harness");
      }),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(`${STALE_1} answered unknown-outcome, not a refusal`);
    expect(f.evidence).toEqual([
      "channel.send answered an error (unknown-outcome): lost the harness",
    ]);
  });

  it("fails one that gets no answer, or an error that is not an error reply", async () => {
    const p = plugin(
      {},
      staleSend(() => {
        throw new NoAnswer("channel.send", "deadline", "no answer within 60 s");
      }),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(`${STALE_1}: no answer within 60 s`);
    expect(f.evidence).toEqual(["no answer within 60 s"]);
    const q = plugin(
      {},
      staleSend(() => {
        throw new Error("socket closed");
      }),
    );
    const g = await failure(controls(q));
    expect(g.detail).toBe(`${STALE_1}: socket closed`);
    expect(g.evidence).toEqual(["socket closed"]);
  });

  it("fails a refused send that still starts a turn", async () => {
    const p = plugin(
      {},
      staleSend(() => {
        const a = [...p.agents.values()][0];
        if (a) p.startTurn(a);
        throw refusal("channel.send", "stale incarnation");
      }),
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(
      "a send refused for expectIncarnation 1 started a turn: channel.baseline reads runs 2 1000 ms later, not 1",
    );
    expect(f.evidence).toEqual(['{"incarnation":2,"runs":2}']);
    expect(trail(p).slice(-3)).toEqual([
      "300 channel.send",
      "1300 channel.baseline",
      "1300 job.stop",
    ]);
  });

  it("a turn that shows only after the quiet second is not seen", async () => {
    // The check waits exactly QUIET_MS (1000 ms); a turn settling later goes unnoticed here.
    const p = plugin(
      { command: false, interrupt: "none", answer: false },
      staleSend(() => {
        const a = [...p.agents.values()][0];
        if (a) a.turns.push(p.clock + 1001);
        throw refusal("channel.send", "stale incarnation");
      }),
    );
    expect((await controls(p)).result).toBe("pass");
    const q = plugin(
      { command: false, interrupt: "none", answer: false },
      staleSend(() => {
        const a = [...q.agents.values()][0];
        if (a) a.turns.push(q.clock + 1000);
        throw refusal("channel.send", "stale incarnation");
      }),
    );
    expect((await failure(controls(q))).detail).toContain("1000 ms later, not 1");
  });
});

describe("channel.command", () => {
  it("fails a reply naming another channel", async () => {
    const p = plugin(
      {},
      { "channel.command": (answer) => ({ ...(answer() as object), channel: "elsewhere" }) },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(
      `channel.command answered channel elsewhere and msgId undefined, not ${CHANNEL} and undefined`,
    );
    expect(f.evidence).toEqual([
      "sent msgId undefined",
      '{"ack":"confirmed","baseline":1,"channel":"elsewhere"}',
    ]);
  });

  it("fails a refused command", async () => {
    const p = plugin(
      {},
      {
        "channel.command": () => {
          throw refusal("channel.command", "no such command");
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.command answered an error (permanent): no such command");
  });
});

describe("channel.interrupt and channel.abort", () => {
  it("fails an interrupt answering another msgId", async () => {
    const p = plugin(
      {},
      { "channel.interrupt": (answer) => ({ ...(answer() as object), msgId: "msg-other" }) },
    );
    const f = await failure(controls(p));
    const id = sent(p, "channel.interrupt").msgId;
    expect(f.detail).toBe(`channel.interrupt answered msgId msg-other, not ${id}`);
    expect(f.evidence).toEqual([
      `{"incarnation":2,"msgId":"msg-other","pending":false,"runs":1,"wasBusy":true}`,
    ]);
  });

  it("fails an interrupt answering msgId null: only an absent msgId goes unchecked", async () => {
    const p = plugin(
      {},
      { "channel.interrupt": (answer) => ({ ...(answer() as object), msgId: null }) },
    );
    const f = await failure(controls(p));
    const id = sent(p, "channel.interrupt").msgId;
    expect(f.detail).toBe(`channel.interrupt answered msgId null, not ${id}`);
    expect(f.evidence).toEqual([
      '{"incarnation":2,"msgId":null,"pending":false,"runs":1,"wasBusy":true}',
    ]);
  });

  it("passes an interrupt whose reply names no msgId", async () => {
    const p = plugin(
      {},
      {
        "channel.interrupt": (answer) => {
          const { msgId: _m, ...r } = answer() as Record<string, unknown>;
          return r;
        },
      },
    );
    expect((await controls(p)).detail).toBe(ALL_PASS);
  });

  it("fails an interrupt that stops the turn and starts none", async () => {
    const p = plugin(
      { command: false },
      {
        "channel.interrupt": (_answer, p, a) => {
          a.turns = [];
          return { wasBusy: true, pending: false, runs: a.runs, msgId: p.msgId };
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe(
      "the interrupt's turn did not settle within 120 s: channel.baseline still reads runs 1, not 2",
    );
    expect(f.evidence).toEqual(['{"incarnation":2,"runs":1}']);
  });

  it("fails a refused interrupt, or a refused send before it", async () => {
    const p = plugin(
      {},
      {
        "channel.interrupt": () => {
          throw refusal("channel.interrupt", "not busy");
        },
      },
    );
    expect((await failure(controls(p))).detail).toBe(
      "channel.interrupt answered an error (permanent): not busy",
    );
    const q = plugin(
      {},
      {
        "channel.send": (answer, _p, _a, n) => {
          if (n === 2) throw refusal("channel.send", "full");
          return answer();
        },
      },
    );
    const g = await failure(controls(q));
    expect(g.detail).toBe("channel.send answered an error (permanent): full");
    expect(q.calls.map((c) => c.method)).not.toContain("channel.interrupt");
  });

  it("fails a refused abort, and takes whatever abort answers", async () => {
    const p = plugin(
      {},
      {
        "channel.abort": () => {
          throw refusal("channel.abort", "cannot stop");
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.abort answered an error (permanent): cannot stop");
    expect(f.evidence).toEqual(["channel.abort answered an error (permanent): cannot stop"]);
    const q = plugin({}, { "channel.abort": () => null });
    expect((await controls(q)).detail).toBe(ALL_PASS);
  });
});

describe("channel.answer", () => {
  it("fails a reply naming other keys", async () => {
    const p = plugin({}, { "channel.answer": () => ({ keys: ["Enter"], ack: "confirmed" }) });
    const f = await failure(controls(p));
    expect(f.detail).toBe('channel.answer answered keys ["Enter"], not the keys pressed');
    expect(f.evidence).toEqual(['{"ack":"confirmed","keys":["Enter"]}']);
  });

  it("fails a reply naming no keys, or the keys in another order", async () => {
    const p = plugin({}, { "channel.answer": () => ({ ack: "unknown" }) });
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.answer answered keys undefined, not the keys pressed");
    expect(f.evidence).toEqual(['{"ack":"unknown"}']);
    const q = plugin(
      {},
      { "channel.answer": () => ({ keys: ["Escape", "Escape"], ack: "confirmed" }) },
    );
    expect((await failure(controls(q))).detail).toBe(
      'channel.answer answered keys ["Escape","Escape"], not the keys pressed',
    );
  });

  it("fails a refused answer", async () => {
    const p = plugin(
      {},
      {
        "channel.answer": () => {
          throw refusal("channel.answer", "no dialog");
        },
      },
    );
    const f = await failure(controls(p));
    expect(f.detail).toBe("channel.answer answered an error (permanent): no dialog");
    expect(f.evidence).toEqual(["channel.answer answered an error (permanent): no dialog"]);
  });
});
