import {
  advance,
  agentRef,
  countIn,
  deliver,
  newAgent,
  observation,
  reading,
  turnState,
  withAgent,
} from "./agents.js";
import type { SimAgent, World } from "./world.js";

/** A watch looks at the world again 25 ms on at the soonest (a turn about to end), a second at the latest (a turn hours away, or none queued). */
const POLL_MS = 25;
const SLOW_POLL_MS = 1000;

// The channel methods over the simulated agents. Deliveries are effects:
// each one really applied is counted per msgId (or command name), and a
// repeat of a msgId already taken returns the first reply without a second
// turn, as a channel with exact dedupe promises.

type Params = Record<string, unknown>;
type Notify = (method: string, params: unknown) => void;

class Refusal extends Error {}

export class Channel {
  private watches = new Map<string, { cancel(): void }>();
  /** A fault: a cancelled watch still gets its settle, as if the two crossed on the wire. */
  crossCancels = false;
  private readonly watched = new Map<string, { ref: string; after: number }>();
  private nextWatch = 1;
  /** A watch whose turn had already settled: its notice goes right behind the reply. */
  private due: (() => void) | undefined;

  constructor(
    private readonly world: World,
    private readonly name: () => string,
    /** False when the channel declares dedupe none: a repeat is then delivered again. */
    private readonly dedupes: () => boolean,
    private readonly notify: Notify,
    private readonly setTimer: (ms: number, fn: () => void) => { cancel(): void },
    /** Names its watches, unique across the plugin processes on one world. */
    private readonly pid: number,
  ) {}

  /** undefined: not a channel method; a thrown Refusal: a permanent error with its message. */
  answer(method: string, p: Params): { value: unknown } | { refused: string } | undefined {
    try {
      const value = this.dispatch(method, p);
      return value === undefined ? undefined : { value: value.v };
    } catch (err) {
      if (err instanceof Refusal) return { refused: err.message };
      throw err;
    }
  }

  /** Sends, once, the notice of a watch answered after its turn had settled. */
  afterReply(): void {
    const due = this.due;
    this.due = undefined;
    due?.();
  }

  cancelWatch(watchId: string): void {
    const t = this.watches.get(watchId);
    t?.cancel();
    this.watches.delete(watchId);
    const w = this.watched.get(watchId);
    if (t && w && this.crossCancels) {
      const a = this.world.state().agents?.[w.ref];
      if (a)
        this.notify("watch/settled", {
          watchId,
          observation: { ...observation(a, w.after), settled: true, runs: w.after + 1 },
        });
    }
  }

  private dispatch(method: string, p: Params): { v: unknown } | undefined {
    const ref = agentRef(p.target);
    switch (method) {
      case "channel.readStates": {
        const out: Record<string, unknown> = {};
        for (const t of (p.targets as string[]) ?? []) {
          const r = withAgent(this.world, t, (a) => (a ? reading(a) : undefined));
          if (r) out[t] = r;
        }
        return { v: out };
      }
      case "channel.baseline":
        return {
          v: withAgent(this.world, ref, (a) =>
            a ? { runs: a.runs, incarnation: a.incarnation } : null,
          ),
        };
      case "channel.receipt": {
        const id = String(p.msgId);
        return {
          v: withAgent(this.world, ref, (a) => {
            const r = a?.receipts[id];
            return r
              ? { state: "accepted", id, runs: r.runs, at: r.at, incarnation: r.incarnation }
              : { state: "not-accepted", id };
          }),
        };
      }
      case "channel.lastRun": {
        const after = Number(p.afterRuns ?? 0);
        return {
          v: withAgent(this.world, ref, (a) => {
            if (!a || (p.inc !== undefined && p.inc !== a.incarnation)) return null;
            return a.runs > after ? observation(a, after) : null;
          }),
        };
      }
      case "channel.watch":
        return { v: this.watch(ref, p) };
      case "channel.send":
      case "channel.fresh":
        return { v: this.send(method, ref, p) };
      case "channel.command":
        return {
          v: this.effect(ref, p, `channel.command:${String(p.name)}`, (a, now, turnMs) => {
            const text = `/${String(p.name)}${p.instructions ? ` ${String(p.instructions)}` : ""}`;
            return {
              channel: this.name(),
              ack: "confirmed",
              baseline: deliver(a, now, turnMs, text),
            };
          }),
        };
      case "channel.interrupt":
        return {
          v: this.effect(ref, p, `channel.interrupt:${String(p.msgId)}`, (a, now, turnMs) => {
            const wasBusy = turnState(a) === "busy";
            a.turns = [];
            deliver(a, now, turnMs, String(p.text), String(p.msgId));
            return {
              wasBusy,
              pending: false,
              runs: a.runs,
              msgId: p.msgId,
              incarnation: a.incarnation,
            };
          }),
        };
      case "channel.abort":
        return {
          v: this.effect(ref, p, `channel.abort:${ref}`, (a, now) => {
            const before = turnState(a) === "busy" ? "busy" : "idle";
            a.turns = [];
            a.since = now;
            return {
              before,
              after: "idle",
              settled: true,
              aborted: before === "busy",
              pending: false,
            };
          }),
        };
      case "channel.answer":
        return {
          v: this.effect(ref, p, `channel.answer:${ref}`, (a) => {
            a.blocked = undefined;
            return { keys: p.keys, ack: "confirmed" };
          }),
        };
      default:
        return undefined;
    }
  }

  /** A fault: the agent's harness restarted on its own, a new incarnation mu was not told of. */
  restart(target: unknown): void {
    withAgent(this.world, agentRef(target), (a, now) => {
      if (a) Object.assign(a, { ...newAgent(now, a.incarnation + 1), receipts: a.receipts });
    });
  }

  /** One delivery applied under the world's lock, counted once per effect id. */
  private effect(
    ref: string,
    p: Params,
    effect: string,
    apply: (a: SimAgent, now: number, turnMs: number) => unknown,
  ): unknown {
    return withAgent(this.world, ref, (a, now, turnMs, s) => {
      if (!a) throw new Refusal(`sim: no agent ${ref} on this channel`);
      if (p.expectIncarnation !== undefined && p.expectIncarnation !== a.incarnation) {
        throw new Refusal(
          `sim: ${ref} is in incarnation ${a.incarnation}, not ${String(p.expectIncarnation)}`,
        );
      }
      const out = apply(a, now, turnMs);
      countIn(s, effect);
      return out;
    });
  }

  private send(method: string, ref: string, p: Params): unknown {
    const msgId = String(p.msgId);
    return withAgent(this.world, ref, (a, now, turnMs, s) => {
      if (!a) throw new Refusal(`sim: no agent ${ref} on this channel`);
      if (p.expectIncarnation !== undefined && p.expectIncarnation !== a.incarnation) {
        throw new Refusal(
          `sim: ${ref} is in incarnation ${a.incarnation}, not ${String(p.expectIncarnation)}`,
        );
      }
      const seen = a.receipts[msgId];
      // Exact dedupe: the same msgId again is the same delivery. Without it
      // the repeat is a second delivery, counted, as mu must never cause.
      if (seen && this.dedupes())
        return { channel: this.name(), ack: "confirmed", baseline: seen.runs, msgId };
      let agent = a;
      if (method === "channel.fresh") {
        // A new conversation; what the channel took before stays taken.
        const fresh = newAgent(now, a.incarnation + 1);
        Object.assign(a, { ...fresh, receipts: a.receipts });
        agent = a;
      }
      let baseline: number;
      if (p.mode === "steer" && agent.turns.length > 0) {
        baseline = agent.runs;
        agent.receipts[msgId] = { runs: baseline, at: now, incarnation: agent.incarnation };
      } else baseline = deliver(agent, now, turnMs, String(p.text), msgId);
      countIn(s, `${method}:${msgId}`);
      return { channel: this.name(), ack: "confirmed", baseline, msgId };
    });
  }

  private watch(ref: string, p: Params): unknown {
    const start = withAgent(this.world, ref, (a) => (a ? { ...a } : undefined));
    if (!start) throw new Refusal(`sim: no agent ${ref} on this channel`);
    const after = p.afterRuns === undefined ? start.runs : Number(p.afterRuns);
    const inc = p.inc === undefined ? start.incarnation : Number(p.inc);
    const watchId = `w${this.pid}-${this.nextWatch++}`;
    // Polls the world: the agent's turns progress on the world clock, which
    // another process (or a scenario) may move. Often while a turn is about
    // to end, seldom while it is hours away: on the virtual engine every
    // poll is a jump of the clock, and a two-hour turn polled every 25 ms
    // is 288,000 of them.
    const poll = () => {
      const now = this.world.now();
      const a = this.world.state().agents?.[ref];
      const again = () => {
        const due = (a?.turns[0]?.endsAt ?? Infinity) - now;
        this.watches.set(
          watchId,
          this.setTimer(Math.min(Math.max(due, POLL_MS), SLOW_POLL_MS), poll),
        );
      };
      if (a) {
        advance(a, now);
        if (a.incarnation !== inc) {
          this.cancelWatch(watchId);
          this.notify("watch/restarted", { watchId, incarnation: a.incarnation });
          return;
        }
        if (a.runs > after) {
          this.cancelWatch(watchId);
          this.notify("watch/settled", { watchId, observation: observation(a, after) });
          return;
        }
      }
      again();
    };
    this.watches.set(watchId, this.setTimer(POLL_MS, poll));
    this.watched.set(watchId, { ref, after });
    // The spec's "at once": a plugin may write the notice in the same breath
    // as the reply, so mu can read both before it listens for the notice.
    // (withAgent brought the agent up to now.)
    if (start.incarnation !== inc || start.runs > after) this.due = poll;
    return {
      watchId,
      initial: observation(start, after),
      ...(p.afterRuns === undefined ? { afterRuns: after } : {}),
    };
  }
}
