import { randomBytes } from "node:crypto";
import { canonical } from "../plugin/load-rules.js";
import type { ChannelSeam, InitializeResult, JobSeam } from "../protocol/declaration.js";
import { EFFECT_MS, onHost, type StartedJob, withJob } from "./job-seam.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, pass } from "./verdict.js";

// What the channel checks share: one started job and its agent, deliveries
// to it, and waiting for its turns by asking channel.baseline, so that a
// check of the watch or of readStates is judged by its own check alone.

/** A real harness may take a while to answer one word. */
export const SETTLE_MS = 120_000;
const POLL_MS = 100;

export interface Agent {
  s: Session;
  j: StartedJob;
  channel: ChannelSeam;
  job: JobSeam;
  /** `<workstream>/<name>`, as readStates keys it. */
  ref: string;
  /** The next send is the agent's first prompt (an on-send kind that has had none yet). */
  first: boolean;
}

export const newMsgId = () => `msg-check-${randomBytes(6).toString("hex")}`;

/**
 * Runs fn on a freshly started job (stopped afterwards). An at-start kind's
 * first turn went with the start; fn begins once that turn has settled.
 */
export async function onAgent(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
  fn: (a: Agent) => Promise<string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const channel = hello.seams.channel;
  if (!channel) throw new CheckFailed("the plugin declares no channel seam");
  let summary = "";
  await onHost(s, ctx, hello, params, (where) =>
    withJob(s, ctx, job, where, params, async (j) => {
      const a: Agent = {
        s,
        j,
        channel,
        job,
        ref: `${j.target.agent.workstream}/${j.target.agent.name}`,
        first: !j.firstMsgId,
      };
      if (j.firstMsgId) await untilRuns(a, 1, "the first prompt's turn (sent with job.start)");
      summary = await fn(a);
    }),
  );
  return pass(summary);
}

export interface Delivery {
  channel: string;
  ack: string;
  baseline?: number;
  msgId?: string;
}

/** The params of a followUp send of one short prompt. */
export function sendParams(a: Agent, msgId = newMsgId(), extra: Record<string, unknown> = {}) {
  const p = {
    target: a.j.target,
    text: "mu plugin check: reply with one word",
    msgId,
    mode: "followUp",
    force: false,
    firstPrompt: a.first,
    ...extra,
  };
  a.first = false;
  return p;
}

/** A delivery whose reply must name the channel and the msgId sent. */
export async function deliver(
  a: Agent,
  method: string,
  params: Record<string, unknown>,
  what = method,
): Promise<Delivery> {
  const r = (await must(what, a.s.call(method, params, EFFECT_MS))) as Delivery;
  const msgId = params.msgId;
  if (r.channel !== a.channel.name || (r.msgId !== undefined && r.msgId !== msgId))
    throw new CheckFailed(
      `${what} answered channel ${r.channel} and msgId ${r.msgId}, not ${a.channel.name} and ${String(msgId)}`,
      [`sent msgId ${String(msgId)}`, canonical(r)],
    );
  return r;
}

export async function send(a: Agent, msgId = newMsgId()): Promise<Delivery> {
  return deliver(a, "channel.send", sendParams(a, msgId));
}

/** channel.baseline: the turns settled in the current incarnation (none yet reads as 0). */
export async function runsNow(a: Agent): Promise<{ runs: number; incarnation?: number }> {
  const b = (await must(
    "channel.baseline",
    a.s.call("channel.baseline", { target: a.j.target }),
  )) as { runs: number; incarnation?: number } | null;
  return b ?? { runs: 0 };
}

/** Asks channel.baseline until at least `runs` turns have settled; answers the count seen. */
export async function untilRuns(a: Agent, runs: number, what: string): Promise<number> {
  const until = a.s.now() + SETTLE_MS;
  for (;;) {
    const b = await runsNow(a);
    if (b.runs >= runs) return b.runs;
    if (a.s.now() >= until)
      throw new CheckFailed(
        `${what} did not settle within ${SETTLE_MS / 1000} s: channel.baseline still reads runs ${b.runs}, not ${runs}`,
        [canonical(b)],
      );
    await a.s.sleep(POLL_MS);
  }
}

/** Waits `ms` and fails if channel.baseline then reads another count than `runs`. */
export async function stillRuns(a: Agent, runs: number, ms: number, why: string): Promise<void> {
  await a.s.sleep(ms);
  const b = await runsNow(a);
  if (b.runs !== runs)
    throw new CheckFailed(
      `${why}: channel.baseline reads runs ${b.runs} ${ms} ms later, not ${runs}`,
      [canonical(b)],
    );
}
