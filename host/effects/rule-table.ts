// The replay rule table as data: one row per situation a pending intent can
// be found in, each with a stable id that scenarios name in `proves` and
// reports count. The resolver's decisions (decide.ts) return these ids, and
// the coverage matrix lists every row with the scenarios that prove it.

import { DELIVERIES } from "./decide.js";

export type Resolution =
  | "success"
  | "definite-failure"
  | "still-unknown"
  | "as-the-reply"
  | "refused";

export interface RuleRow {
  id: string;
  effects: readonly string[];
  situation: string;
  action: string;
  resolves: Resolution;
}

function keyed(prefix: "start" | "acquire", effect: string): RuleRow[] {
  return [
    {
      id: `${prefix}.lookup.found`,
      effects: [effect],
      situation: "lookup answers found",
      action: "record the handle (and view, baseline)",
      resolves: "success",
    },
    {
      id: `${prefix}.lookup.pending`,
      effects: [effect],
      situation: "lookup answers pending",
      action: "nothing more",
      resolves: "still-unknown",
    },
    {
      id: `${prefix}.lookup.unknown`,
      effects: [effect],
      situation: "lookup answers unknown",
      action: "nothing more; exit 1 naming the key",
      resolves: "still-unknown",
    },
    {
      id: `${prefix}.lookup.none.proven`,
      effects: [effect],
      situation:
        "lookup answers none; the writer and the plugin process it called are proven gone; the lookup was fenced or inFlightMs has passed",
      action: "roll the attempt back",
      resolves: "definite-failure",
    },
    {
      id: `${prefix}.lookup.none.unproven`,
      effects: [effect],
      situation: "lookup answers none but a proof above is missing",
      action: "nothing",
      resolves: "still-unknown",
    },
    {
      id: `${prefix}.dedupe.inside`,
      effects: [effect],
      situation: "no lookup; exact dedupe; inside windowMs",
      action: "resend the identical params",
      resolves: "as-the-reply",
    },
    {
      id: `${prefix}.dedupe.expired`,
      effects: [effect],
      situation: "no lookup; exact dedupe; the window has passed",
      action: "resend nothing",
      resolves: "still-unknown",
    },
  ];
}

export const RULE_TABLE: readonly RuleRow[] = [
  {
    id: "guard.writer-alive",
    effects: ["*"],
    situation: "the invocation that wrote the intent still lives",
    action: "refuse the verb",
    resolves: "refused",
  },
  {
    id: "guard.resolver-alive",
    effects: ["*"],
    situation: "another resolver of the intent still lives",
    action: "refuse the verb",
    resolves: "refused",
  },
  {
    id: "fence.instance",
    effects: ["*"],
    situation: "the plugin now answers under another instance",
    action: "send nothing (stop-changed)",
    resolves: "refused",
  },
  {
    id: "stop.reissue",
    effects: ["job.stop"],
    situation: "a stop is pending",
    action: "send job.stop again",
    resolves: "as-the-reply",
  },
  {
    id: "release.reissue",
    effects: ["host.release"],
    situation: "a release is pending",
    action: "send host.release again",
    resolves: "as-the-reply",
  },
  ...keyed("start", "job.start"),
  ...keyed("acquire", "host.acquire"),
  {
    id: "start.lookup.none.file",
    effects: ["job.start"],
    situation: "a file-handle kind's lookup answers none",
    action: "never act on it",
    resolves: "still-unknown",
  },
  {
    id: "delivery.receipt.accepted",
    effects: DELIVERIES,
    situation: "receipt exact; the receipt says accepted",
    action: "resend nothing",
    resolves: "success",
  },
  {
    id: "delivery.receipt.not-accepted.resend",
    effects: DELIVERIES,
    situation:
      "receipt exact; not-accepted for the asked msgId; exact dedupe; the text is in the intent; no newer delivery to the agent was written",
    action: "resend the identical params, same msgId",
    resolves: "as-the-reply",
  },
  {
    id: "delivery.receipt.not-accepted.settled",
    effects: DELIVERIES,
    situation:
      "receipt exact; not-accepted for the asked msgId; no safe resend (dedupe none, or a newer delivery was written); the plugin process the writer called is gone",
    action: "resend nothing; receipt not-accepted, the text kept for the user to send again",
    resolves: "definite-failure",
  },
  {
    id: "delivery.receipt.other",
    effects: DELIVERIES,
    situation:
      "receipt exact; unreachable, another msgId, or not-accepted with no safe resend while the process that got the request may still hold it",
    action: "resend nothing",
    resolves: "still-unknown",
  },
  {
    id: "delivery.resend",
    effects: DELIVERIES,
    situation: "no exact receipt; no newer delivery to the agent was written",
    action: "deduped resend",
    resolves: "as-the-reply",
  },
  {
    id: "delivery.job-ended",
    effects: DELIVERIES,
    situation: "the job the delivery was for has ended (stopped, closed, rolled back)",
    action: "ask and resend nothing; its receipt says unknown",
    resolves: "still-unknown",
  },
  {
    id: "delivery.no-msgid",
    effects: ["channel.command", "channel.abort", "channel.answer"],
    situation: "the delivery carries no msgId (command, abort, answer)",
    action: "resend nothing; its receipt says unknown",
    resolves: "still-unknown",
  },
  {
    id: "delivery.superseded",
    effects: DELIVERIES,
    situation: "no exact receipt; a newer delivery to the agent was written",
    action: "nothing",
    resolves: "still-unknown",
  },
  {
    id: "atstart.found",
    effects: ["job.start"],
    situation: "at-start start; lookup found (by --task replay or agent check)",
    action: "record handle and first_inc, open the view; accepted runs=0",
    resolves: "success",
  },
  {
    id: "atstart.unresolved",
    effects: ["job.start"],
    situation: "at-start start; not resolved",
    action: "answer unreachable naming the key; never resend",
    resolves: "still-unknown",
  },
  {
    id: "atstart.none.proven",
    effects: ["job.start"],
    situation: "at-start start; proven none",
    action: "fail and roll back, then ask channel.receipt",
    resolves: "definite-failure",
  },
];
