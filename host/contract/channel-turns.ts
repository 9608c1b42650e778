import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import {
  type Agent,
  deliver,
  newMsgId,
  onAgent,
  runsNow,
  sendParams,
  untilRuns,
} from "./channel-kit.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome } from "./verdict.js";

// Two sends, one after the other settled: each send's baseline is the real
// count of settled turns, runs grows by exactly one per turn, and the reads
// mu builds on (readStates, baseline, lastRun) agree with that count. A
// lastRun two turns behind is of the last settled turn, as one a turn behind
// is: mu prints an observation's runs beside its text, so both must be of
// one turn. The two prompts differ, so a text of the first turn shows.

async function readStates(a: Agent, runs: number, when: string): Promise<void> {
  const r = (await must(
    "channel.readStates",
    a.s.call("channel.readStates", { target: a.j.target, targets: [a.ref] }),
  )) as Record<string, { runs?: number }>;
  const mine = r[a.ref];
  if (!mine || mine.runs !== runs)
    throw new CheckFailed(
      mine
        ? `channel.readStates ${when} reads runs ${mine.runs} for ${a.ref}, where channel.baseline reads ${runs}`
        : `channel.readStates ${when} holds no reading for the asked agent ${a.ref}`,
      [canonical(r)],
    );
}

async function lastRun(a: Agent, afterRuns: number, want: "settled" | "null"): Promise<void> {
  const r = (await must(
    "channel.lastRun",
    a.s.call("channel.lastRun", { target: a.j.target, afterRuns }),
  )) as { settled?: boolean; runs?: number } | null;
  if (want === "null" ? r !== null : !r?.settled || (r.runs ?? 0) <= afterRuns)
    throw new CheckFailed(
      want === "null"
        ? `channel.lastRun past ${afterRuns}, the current count, answered a turn, not null`
        : `channel.lastRun past ${afterRuns} answered ${r === null ? "null" : `runs ${r.runs}, settled ${r.settled}`} after a turn past it settled`,
      [canonical(r)],
    );
}

/** lastRun past `behind`, more than a turn back, must answer what lastRun past the count less one does. */
async function lastOfMany(a: Agent, behind: number, runs: number): Promise<void> {
  const ask = async (afterRuns: number) =>
    (await must(
      "channel.lastRun",
      a.s.call("channel.lastRun", { target: a.j.target, afterRuns }),
    )) as { runs?: number; lastText?: string; lastError?: string } | null;
  const back = await ask(behind);
  const last = await ask(runs - 1);
  const same = (x: typeof back) => [x?.runs, x?.lastText ?? null, x?.lastError ?? null];
  if (JSON.stringify(same(back)) !== JSON.stringify(same(last)))
    throw new CheckFailed(
      back === null
        ? `channel.lastRun past ${behind}, ${runs - behind} turns back, answered null after ${runs - behind} turns past it settled`
        : `channel.lastRun past ${behind}, ${runs - behind} turns back, answered another turn than past ${runs - 1}: an observation is of the last settled turn, its runs and its text alike`,
      [`past ${behind}: ${canonical(back)}`, `past ${runs - 1}: ${canonical(last)}`],
    );
}

/** Sends one prompt; its baseline must be `before`, and one turn later runs must be before+1. */
async function oneTurn(a: Agent, before: number, which: string): Promise<void> {
  const text = `mu plugin check: reply with one word (the ${which} turn)`;
  const d = await deliver(a, "channel.send", sendParams(a, newMsgId(), { text }));
  if (d.baseline !== undefined && d.baseline !== before)
    throw new CheckFailed(
      `the ${which} channel.send answered baseline ${d.baseline}, where ${before} turns had settled`,
      [canonical(d)],
    );
  const seen = await untilRuns(a, before + 1, `the ${which} send's turn`);
  if (seen !== before + 1)
    throw new CheckFailed(
      `runs went from ${before} to ${seen} with one turn: runs must grow by exactly one per settled turn`,
      [`channel.baseline before: runs ${before}`, `after one turn: runs ${seen}`],
    );
}

export async function channelTurns(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  return onAgent(ctx, s, hello, params, async (a) => {
    const b0 = (await runsNow(a)).runs;
    await readStates(a, b0, "before the sends");
    await lastRun(a, b0, "null");
    await oneTurn(a, b0, "first");
    await lastRun(a, b0, "settled");
    await oneTurn(a, b0 + 1, "second");
    await readStates(a, b0 + 2, "after two turns");
    await lastRun(a, b0 + 2, "null");
    await lastOfMany(a, b0, b0 + 2);
    return `two sends answered baselines ${b0} and ${b0 + 1}; runs went ${b0}, ${b0 + 1}, ${b0 + 2}; readStates and lastRun agree, two turns back as one`;
  });
}
