import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { type Agent, newMsgId, onAgent, send, untilRuns } from "./channel-kit.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, describeCall, failedCall, type Outcome } from "./verdict.js";
import { clip } from "./wire.js";

// A watch streams: its reply first, then exactly one notification, at once
// when a turn past afterRuns had already settled; and a watch mu cancels
// with $/cancel {watchId} sends nothing once the cancel was read.

/** Long enough for a notification already written to arrive, and for a plugin's poll to notice a settle. */
const QUIET_MS = 1000;
const NOTE_MS = 10_000;

interface Line {
  watchId?: string;
  note: boolean;
  text: string;
}

/** What the plugin wrote on stdout naming a watch, in order: its replies and its notifications. */
function watchLines(s: Session): Line[] {
  return s.log.wire
    .linesWith('"watchId"')
    .filter((l) => l.stream === "stdout")
    .map(({ line }) => {
      try {
        const m = JSON.parse(line) as {
          method?: string;
          params?: { watchId?: string };
          result?: { watchId?: string };
        };
        const note = typeof m.method === "string";
        return { watchId: note ? m.params?.watchId : m.result?.watchId, note, text: line };
      } catch {
        return { note: false, text: line };
      }
    });
}

/**
 * A watch call that failed: a notification that came before its reply is
 * the reason to name. Whether the reply is on record after it depends on
 * when mu's connection judged the early notification and stopped reading,
 * so what counts is that no reply naming its watch came before it.
 */
function earlyNote(s: Session, err: unknown): never {
  const lines = watchLines(s);
  const early = lines.find(
    (l, i) =>
      l.note &&
      l.watchId !== undefined &&
      !lines.slice(0, i).some((r) => !r.note && r.watchId === l.watchId),
  );
  if (early)
    throw new CheckFailed(
      `the notification of watch ${early.watchId} came before the reply to its channel.watch`,
      lines.filter((l) => l.watchId === early.watchId).map((l) => clip(l.text)),
    );
  throw new CheckFailed(failedCall("channel.watch", err), [describeCall(err)]);
}

async function openWatch(a: Agent, afterRuns: number): Promise<string> {
  try {
    const r = (await a.s.call("channel.watch", { target: a.j.target, afterRuns })) as {
      watchId: string;
    };
    return r.watchId;
  } catch (err) {
    earlyNote(a.s, err);
  }
}

function notesOf(s: Session, watchId: string): Line[] {
  return watchLines(s).filter((l) => l.note && l.watchId === watchId);
}

export async function channelWatch(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  return onAgent(ctx, s, hello, params, async (a) => {
    const d = await send(a);
    const before = d.baseline ?? 0;
    const runs = await untilRuns(a, before + 1, "the send's turn");
    // A watch on a turn that has already settled.
    const settledId = await openWatch(a, before);
    const note = await new Promise<{ method: string; params: Record<string, unknown> } | null>(
      (done) => {
        const timer = setTimeout(() => done(null), NOTE_MS);
        s.proc.conn.onWatch(settledId, (method, p) => {
          clearTimeout(timer);
          done({ method, params: p });
        });
      },
    );
    if (!note) {
      s.proc.conn.cancelWatch(settledId);
      throw new CheckFailed(
        `a watch past run ${before}, opened once runs read ${runs}, had no notification within ${NOTE_MS / 1000} s`,
      );
    }
    const o = note.params.observation as { runs?: number } | undefined;
    if (note.method !== "watch/settled" || (o?.runs ?? 0) <= before)
      throw new CheckFailed(
        `a watch past run ${before}, a turn past it settled, ended with ${note.method} at runs ${o?.runs}`,
        [canonical(note.params)],
      );
    // A cancelled watch: nothing is pending when it is cancelled, then a turn settles.
    const cancelledId = await openWatch(a, runs);
    // The cancel is on the plugin's stdin ahead of the send that follows it.
    s.proc.conn.cancelWatch(cancelledId);
    await send(a, newMsgId());
    const after = await untilRuns(a, runs + 1, "a turn sent after the cancel");
    await s.sleep(QUIET_MS);
    const notes = notesOf(s, settledId);
    if (notes.length !== 1)
      throw new CheckFailed(
        `watch ${settledId} sent ${notes.length} notifications, not exactly one`,
        notes.map((l) => clip(l.text)),
      );
    const late = notesOf(s, cancelledId);
    if (late.length > 0)
      throw new CheckFailed(
        `watch ${cancelledId} was ended by $/cancel before a turn past it began, yet its notification came once runs reached ${after}`,
        late.map((l) => clip(l.text)),
      );
    return `a watch on a settled turn answered first, then one watch/settled (runs ${o?.runs}); a watch ended by $/cancel sent nothing as runs reached ${after}`;
  });
}
