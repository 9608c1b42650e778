import type { CrashPointName } from "../../host/crash-point.js";
import { EFFECT_MS, READ_MS } from "../../host/effects/resolve.js";
import type { Fault, InvalidKind } from "../plugin/fault-types.js";
import type { Step } from "../runner/scenario.js";
import { onOrNext, type Swarm } from "./swarm.js";

// The explorer's means of drawing a workload: picks by chance and by weight,
// the faults any call may meet, and the script a workload's steps are
// written into (with time passing for mu and the plugin alike).

export type Rand = () => number;
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** Picks by weight: [[weight, value], …]; one a swarm turned off gives way to the next one on. */
export function weighted<T>(
  r: Rand,
  xs: readonly (readonly [number, T])[],
  on: (v: T) => boolean = () => true,
): T {
  let x = r() * xs.reduce((a, [w]) => a + w, 0);
  let i = xs.length - 1;
  for (const [k, [w]] of xs.entries()) {
    x -= w;
    if (x < 0) {
      i = k;
      break;
    }
  }
  return onOrNext(xs, i, ([, v]) => on(v))[1];
}

const INVALID: InvalidKind[] = ["not-json", "unknown-field", "bad-utf8", "reply-to-none"];

/** What any call may meet: of the kinds a swarm (swarm.ts) left on. */
export function anyFault(r: Rand, swarm: Swarm = {}): Fault["do"] {
  let applied = false;
  const kinds: (() => Fault["do"])[] = [
    () => ({ crash: "after" }),
    () => ({ crash: "before" }),
    () => ({ error: { kind: "retryable" } }),
    () => ({ error: { kind: "permanent" } }),
    // An unknown outcome may or may not have happened: half the time the sim applied it.
    () => ({ error: { kind: "unknown-outcome", ...(applied ? { applied: true as const } : {}) } }),
    () => ({ hang: true }),
    () => ({ killMu: pick(r, ["before", "after"] as const) }),
    // Late answers either side of the deadlines mu gives effects and reads.
    () => ({ delayMs: pick(r, [EFFECT_MS - 50, EFFECT_MS + 50, READ_MS - 50, READ_MS + 50]) }),
    () => ({ invalid: pick(r, INVALID) }),
    () => ({ replyTwice: true }),
    () => ({ setInstance: pick(r, ["sim-2", "sim-1"]) }),
  ];
  // One draw picks the kind and, by what is left of it, whether an unknown
  // outcome was applied: no extra draw, so every seed's later choices stay as they were.
  const x = r() * kinds.length;
  const i = Math.floor(x);
  applied = x - i < 0.5;
  const on = swarm.faults;
  return onOrNext(kinds, i, (k) => !on || on.has(kinds.indexOf(k)))();
}

/** How long a held writer's call stays in the plugin's hands: well inside every deadline. */
const HELD_MS = 3_000;

/** What a delivery's reply may wrongly say: another msgId, another incarnation. */
const WRONG_REPLIES: Record<string, Record<string, unknown>[]> = {
  "channel.send": [{ msgId: "msg-someone-else" }],
  "channel.fresh": [{ msgId: "msg-someone-else" }],
  "channel.interrupt": [{ msgId: "msg-someone-else" }, { incarnation: 99 }],
};

/** Now and then, on a delivery: taken, but answered naming another msgId or incarnation. */
export function wrongReply(r: Rand, on: string): Fault["do"] | undefined {
  const wrong = WRONG_REPLIES[on];
  return wrong && r() < 0.25 ? { patchReply: pick(r, wrong) } : undefined;
}

/** Longer than the latest answer a fault makes (an effect's deadline and 50 ms) and the EOF grace. */
const LATE_MS = EFFECT_MS + 50 + 10_000;

export const EFFECT_POINTS: CrashPointName[] = [
  "store.before-rename",
  "effect.intent-durable",
  "effect.request-written",
  "effect.reply-read",
  "effect.intent-deleted",
];

/**
 * A workload's steps as they are drawn. Time passes for mu and the plugin
 * alike (the world's clock offset and mu's MU_CLOCK_OFFSET_MS move together),
 * so a window expires for both; a clock that jumps for one side only is skew,
 * which no host can defend against.
 */
export class Script {
  readonly steps: Step[] = [];
  private offset = 0;

  constructor(
    private readonly r: Rand,
    private readonly points: CrashPointName[],
    /** A later point in place of a drawn one, drawn from a stream of its own so the rest stays as it was. */
    private readonly refine: (p: CrashPointName) => CrashPointName = (p) => p,
  ) {}

  /** The faults the world holds now: each fault step replaces them. */
  private faults: Fault[] = [];

  fault(on: string, act: Fault["do"]): void {
    this.setFaults([{ on, do: act }]);
  }

  /** Several faults at once, replacing those the world holds. */
  setFaults(faults: Fault[]): void {
    this.faults = faults;
    this.steps.push({ world: { faults: this.faults } });
  }

  /**
   * No fault from here on, and the plugin back at the instance mu recorded
   * things under. After a late-answer fault, a plugin that outlived its
   * killed mu may still hold the late call (its group alive, so none of its
   * effects can be proven never made): first the time passes in which it
   * answers and exits.
   */
  clear(): void {
    const late = this.steps.some((s) =>
      "world" in s ? (s.world.faults ?? []).some((f) => "delayMs" in f.do) : false,
    );
    this.faults = [];
    const step = { world: { faults: [], instance: "sim-1" } };
    this.steps.push(late ? { ...step, elapseMs: LATE_MS } : step);
  }

  /** The plugin answers as this instance from here on. */
  instance(name: string): void {
    this.steps.push({ world: { instance: name } });
  }

  /** Past a 30 s in-flight bound, or past a 600 s dedupe window too. */
  maybePass(): void {
    if (this.r() >= 0.1) return;
    this.pass(pick(this.r, [40_000, 700_000]));
  }

  pass(ms: number): void {
    this.offset += ms;
    this.steps.push({ world: { clockOffsetMs: this.offset } });
  }

  /**
   * The agents ended the way a person would: no faults, past every in-flight
   * bound, each read, closed and forgotten (any may find nothing to do).
   */
  endAgents(agents: readonly string[]): void {
    this.clear();
    this.pass(40_000);
    for (const a of agents)
      for (const v of ["read", "close", "forget"]) this.verb(`agent ${v} ${a}`, false);
  }

  /** A verb; now and then mu is set to die at one of its crash points. */
  verb(mu: string, mayDie = true, extra: Record<string, string> = {}): void {
    this.steps.push(this.drawn(mu, mayDie, extra));
  }

  /**
   * A verb whose crash point, if any, the caller drew from a stream of its
   * own: it draws nothing from the main stream, so adding it to a workload
   * leaves the rest of that workload as it was.
   */
  verbAside(mu: string, crashAt?: CrashPointName): void {
    this.steps.push(stepOf(mu, this.clocked(crashAt ? { MU_CRASH_AT: crashAt } : {})));
  }

  /** A verb with an environment of its own, drawing nothing from the main stream. */
  aside(mu: string, env: Record<string, string> = {}): void {
    this.steps.push(stepOf(mu, this.clocked(env)));
  }

  /** `env`, and mu's clock moved as far as the world's has been. */
  private clocked(env: Record<string, string> = {}): Record<string, string> {
    return this.offset > 0 ? { ...env, MU_CLOCK_OFFSET_MS: String(this.offset) } : { ...env };
  }

  private drawn(mu: string, mayDie: boolean, extra: Record<string, string>): Step {
    const env = this.clocked(extra);
    if (mayDie && this.r() < 0.12) env.MU_CRASH_AT = this.refine(pick(this.r, this.points));
    return stepOf(mu, env);
  }

  /**
   * The nemesis that holds a writer alive: the verb runs in the background
   * while its effect call is held in the plugin's hands (answered late but
   * inside its deadline), and meanwhile `next`, another verb on the same
   * subject, runs and must leave that intent to its live writer. Both are
   * joined before anything else runs. Draws from the main stream exactly
   * what verb() would, so the rest of the workload stays as it was.
   */
  held(mu: string, call: string, next: string, extra: Record<string, string> = {}): void {
    const first = this.drawn(mu, true, extra);
    this.faults = [...this.faults, { on: call, do: { delayMs: HELD_MS } }];
    this.steps.push({ world: { faults: this.faults } });
    this.steps.push({ ...first, background: true } as Step);
    this.steps.push(stepOf(next, this.clocked()));
    this.steps.push({ join: true });
  }

  /**
   * A liveness check: with no fault left and mu not set to die, this verb
   * must exit 0. The step carries its expected exit, which the invariants
   * read (invariants.ts) and a found scenario keeps.
   */
  must(mu: string): void {
    this.steps.push({ ...stepOf(mu, this.clocked()), exit: 0 } as Step);
  }
}

/** A mu step, with its environment only when it has one. */
function stepOf(mu: string, env: Record<string, string>): Step {
  return Object.keys(env).length > 0 ? { mu, env } : { mu };
}
