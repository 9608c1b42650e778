import type { InitializeResult } from "../protocol/declaration.js";
import { channelControls } from "./channel-controls.js";
import { channelDedupe, dedupeSkip } from "./channel-dedupe.js";
import { channelReceipts, receiptSkip } from "./channel-receipts.js";
import { channelLifecycle } from "./channel-seam.js";
import { channelTurns } from "./channel-turns.js";
import { channelWatch } from "./channel-watch.js";
import { jobAttach, jobCheckSteps } from "./job-attach.js";
import { inFlightSkip, jobInFlight } from "./job-inflight.js";
import { jobReplay } from "./job-replay.js";
import { jobIdempotency, jobLifecycle } from "./job-seam.js";
import { jobSpec, specSkip } from "./job-spec.js";
import { inSession, type RunContext, type Session } from "./session.js";
import { type CheckId, type Outcome, skip } from "./verdict.js";

// The job and channel checks, in the order they run. Each starts real jobs,
// so it runs only for the seam the author named; a provider's jobs run on a
// machine the check acquires, so those need --seam host too.

export interface AgentOptions {
  seams: ReadonlySet<string>;
  params: Record<string, string>;
  repeat: number;
  /** The checks that failed so far. */
  failed?: (id: CheckId) => boolean;
}

type Body = (ctx: RunContext, s: Session, h: InitializeResult, o: AgentOptions) => Promise<Outcome>;

interface AgentCheck {
  id: CheckId;
  seam: "job" | "channel";
  body: Body;
  /** A capability the check needs that the declaration switches off. */
  absent?: (h: InitializeResult) => Outcome | undefined;
  /** A check that asks what this one asks first: when it failed, this one would only fail again for its reason. */
  after?: CheckId;
}

export const AGENT_CHECKS: readonly AgentCheck[] = [
  { id: "job.lifecycle", seam: "job", body: (c, s, h, o) => jobLifecycle(c, s, h, o.params) },
  {
    id: "job.idempotency",
    seam: "job",
    body: (c, s, h, o) => jobIdempotency(c, s, h, o.params, o.repeat),
  },
  { id: "job.replay", seam: "job", body: (c, s, h, o) => jobReplay(c, s, h, o.params) },
  {
    id: "job.inflight",
    seam: "job",
    body: (c, s, h, o) => jobInFlight(c, s, h, o.params),
    absent: inFlightSkip,
    after: "job.replay",
  },
  { id: "job.attach", seam: "job", body: (c, s, h, o) => jobAttach(c, s, h, o.params) },
  { id: "job.checkSteps", seam: "job", body: (c, s, h, o) => jobCheckSteps(c, s, h, o.params) },
  {
    id: "job.spec",
    seam: "job",
    body: (c, s, h, o) => jobSpec(c, s, h, o.params),
    absent: specSkip,
  },
  {
    id: "channel.lifecycle",
    seam: "channel",
    body: (c, s, h, o) => channelLifecycle(c, s, h, o.params),
  },
  { id: "channel.turns", seam: "channel", body: (c, s, h, o) => channelTurns(c, s, h, o.params) },
  {
    id: "channel.dedupe",
    seam: "channel",
    body: (c, s, h, o) => channelDedupe(c, s, h, o.params),
    absent: dedupeSkip,
  },
  {
    id: "channel.receipts",
    seam: "channel",
    body: (c, s, h, o) => channelReceipts(c, s, h, o.params),
    absent: receiptSkip,
  },
  { id: "channel.watch", seam: "channel", body: (c, s, h, o) => channelWatch(c, s, h, o.params) },
  {
    id: "channel.controls",
    seam: "channel",
    body: (c, s, h, o) => channelControls(c, s, h, o.params),
  },
];

export function runAgentCheck(
  ctx: RunContext,
  o: AgentOptions,
  c: AgentCheck,
  h: InitializeResult,
): Promise<Outcome> {
  if (!h.seams.job) return Promise.resolve(skip("the plugin declares no job seam"));
  if (c.seam === "channel" && !h.seams.channel)
    return Promise.resolve(skip("the plugin declares no channel seam"));
  const off = c.absent?.(h);
  if (off) return Promise.resolve(off);
  if (!o.seams.has(c.seam))
    return Promise.resolve(
      skip(`it starts a real job: add --seam ${c.seam} and the --param values it needs`),
    );
  if (h.seams.host && !o.seams.has("host"))
    return Promise.resolve(
      skip("a provider's jobs run on machines it acquired; add --seam host too"),
    );
  if (c.after && o.failed?.(c.after))
    return Promise.resolve(
      skip(`${c.after} did not pass, and this check asks the same of new processes as it does`),
    );
  return inSession(ctx, c.id, [c.seam], (s) => c.body(ctx, s, h, o));
}
