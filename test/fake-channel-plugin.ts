import type { JobTarget } from "../host/contract/job-seam.js";
import type { ChannelSeam, JobSeam } from "../host/protocol/declaration.js";
import { ALL_CAPS, FakeJobPlugin, jobSeam } from "./fake-job-plugin.js";
import { refusal } from "./fake-provider.js";

// A job and channel plugin for in-process tests of `mu plugin check`'s
// channel checks. Each agent has a turn count (`runs`) and an `incarnation`;
// a delivery (send, fresh, command, interrupt) starts a turn that settles
// TURN_MS later on the virtual clock, after any turn queued before it, so a
// check that waits for runs by asking channel.baseline sees it settle as it
// would on a real harness, at no cost in real time. Correct by default; each
// hook replaces one method's answer, so a test can give the check the answer
// a broken channel would. The same checks against a plugin on the wire are
// in test/contract-channel-fixture.test.ts.

export const CHANNEL = "fake-chan";
/** How long one turn takes to settle, on the virtual clock. */
export const TURN_MS = 300;

/** Every control declared, so each path of the channel checks runs. */
export const ALL_ON: ChannelSeam["caps"] = {
  fence: "none",
  receipt: "none",
  dedupe: "none",
  steer: "none",
  interrupt: "native",
  fresh: "in-place",
  answer: true,
  command: true,
  watch: "stream",
  settleText: "full",
};

export interface ChanAgent {
  ref: string;
  incarnation: number;
  /** Turns settled in this incarnation. */
  runs: number;
  /** When each turn started and not yet settled settles, in order. */
  turns: number[];
}

/**
 * What a channel method answers in place of the correct answer. answer()
 * is the correct answer with its effect; a hook that never calls it has
 * none, and one that calls it and then throws had the effect yet refused.
 */
export type ChannelHook = (
  answer: () => unknown,
  params: Record<string, unknown>,
  agent: ChanAgent,
  n: number,
) => unknown;

export type ChannelHooks = Partial<Record<string, ChannelHook>>;

export class FakeChannelPlugin extends FakeJobPlugin {
  readonly agents = new Map<string, ChanAgent>();

  constructor(
    readonly caps: ChannelSeam["caps"] = ALL_ON,
    readonly channelHooks: ChannelHooks = {},
    seam: JobSeam = jobSeam(ALL_CAPS, { channel: CHANNEL }),
  ) {
    super(seam);
    this.hello.seams.channel = { name: CHANNEL, caps };
  }

  /** The agent a call's target names, made on first use in the target's incarnation. */
  agentOf(target: JobTarget): ChanAgent {
    const ref = `${target.agent.workstream}/${target.agent.name}`;
    let a = this.agents.get(ref);
    if (!a) {
      a = { ref, incarnation: target.agent.incarnation, runs: 0, turns: [] };
      this.agents.set(ref, a);
    }
    // Settled lazily: every read happens at some clock, and sees what is due by then.
    while (a.turns.length > 0 && (a.turns[0] as number) <= this.clock) {
      a.turns.shift();
      a.runs++;
    }
    return a;
  }

  /** Starts a turn after those queued; answers the count before it, a delivery's baseline. */
  startTurn(a: ChanAgent): number {
    const baseline = a.runs + a.turns.length;
    a.turns.push(Math.max(this.clock, a.turns.at(-1) ?? 0) + TURN_MS);
    return baseline;
  }

  override answer(method: string, params: Record<string, unknown>): unknown {
    if (!method.startsWith("channel.")) {
      const answered = super.answer(method, params);
      // An at-start kind's first turn goes with the job's start.
      if (method === "job.start" && this.seam.firstTurn === "at-start")
        this.startTurn(this.agentOf(params.target as JobTarget));
      return answered;
    }
    const a = this.agentOf(params.target as JobTarget);
    const correct = () => this.correct(method, params, a);
    const hook = this.channelHooks[method];
    return hook ? hook(correct, params, a, this.nth(method)) : correct();
  }

  private correct(method: string, p: Record<string, unknown>, a: ChanAgent): unknown {
    // A delivery into another incarnation than the agent's is refused, nothing applied.
    if (p.expectIncarnation !== undefined && p.expectIncarnation !== a.incarnation)
      throw refusal(
        method,
        `the agent is in incarnation ${a.incarnation}, not ${p.expectIncarnation}`,
      );
    const delivered = (baseline: number) => ({
      channel: CHANNEL,
      ack: "confirmed",
      baseline,
      ...(p.msgId !== undefined ? { msgId: p.msgId } : {}),
    });
    switch (method) {
      case "channel.baseline":
        return { runs: a.runs, incarnation: a.incarnation };
      case "channel.readStates": {
        const state = a.turns.length > 0 ? "busy" : "idle";
        return { [a.ref]: { state, since: 0, runs: a.runs, incarnation: a.incarnation } };
      }
      case "channel.send":
      case "channel.command":
        return delivered(this.startTurn(a));
      case "channel.fresh":
        // A new conversation in the same session: the next incarnation, counted from 0.
        Object.assign(a, { incarnation: a.incarnation + 1, runs: 0, turns: [] });
        return delivered(this.startTurn(a));
      case "channel.interrupt": {
        // The running turn stops; the interrupt's text is the next turn.
        const wasBusy = a.turns.length > 0;
        a.turns = [];
        this.startTurn(a);
        return {
          wasBusy,
          pending: false,
          runs: a.runs,
          msgId: p.msgId,
          incarnation: a.incarnation,
        };
      }
      case "channel.abort": {
        const before = a.turns.length > 0 ? "busy" : "idle";
        a.turns = [];
        return { before, after: "idle", settled: true, aborted: before === "busy", pending: false };
      }
      case "channel.answer":
        return { keys: p.keys, ack: "confirmed" };
    }
    throw new Error(`the fake channel plugin does not know ${method}`);
  }
}
