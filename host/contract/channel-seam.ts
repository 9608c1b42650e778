import { randomBytes } from "node:crypto";
import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { onHost, withJob } from "./job-seam.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, pass } from "./verdict.js";

// The channel's promises on a real job: a send's reply names the channel and
// the msgId sent, an exact receipt echoes the asked msgId and says accepted,
// and a watch past the send's baseline settles with exactly one notification.

const EFFECT_MS = 60_000;
/** A real harness may take a while to answer one word. */
const SETTLE_MS = 120_000;

export async function channelLifecycle(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const channel = hello.seams.channel;
  if (!channel) throw new CheckFailed("the plugin declares no channel seam");
  let summary = "";
  await onHost(s, ctx, hello, params, (where) =>
    withJob(s, ctx, job, where, params, async (j) => {
      let msgId: string;
      let baseline: number;
      let watchId: string | undefined;
      if (j.firstMsgId) {
        // An at-start kind's first delivery went with the start.
        msgId = j.firstMsgId;
        baseline = 0;
      } else {
        msgId = `msg-check-${randomBytes(6).toString("hex")}`;
        // The watch is open before the send, so it is pending when the turn
        // settles however slow this machine is: a watch on a turn already
        // settled is channel.watch's case, and must not decide this one.
        const before = (await must(
          "channel.baseline",
          s.call("channel.baseline", { target: j.target }),
        )) as { runs: number } | null;
        watchId = await openWatch(s, j.target, before?.runs ?? 0);
        const sent = (await must(
          "channel.send",
          s.call(
            "channel.send",
            {
              target: j.target,
              text: "mu plugin check: reply with one word",
              msgId,
              mode: "followUp",
              force: false,
              firstPrompt: true,
            },
            EFFECT_MS,
          ),
        )) as { channel: string; msgId?: string; baseline?: number };
        if (sent.channel !== channel.name || (sent.msgId !== undefined && sent.msgId !== msgId))
          throw new CheckFailed(
            `channel.send answered channel ${sent.channel} and msgId ${sent.msgId}, not ${channel.name} and ${msgId}`,
            [`sent msgId ${msgId} on channel ${channel.name}`, canonical(sent)],
          );
        baseline = sent.baseline ?? 0;
      }
      if (channel.caps.receipt === "exact") {
        const r = (await must(
          "channel.receipt",
          s.call("channel.receipt", { target: j.target, msgId }),
        )) as {
          state: string;
          id: string;
        };
        if (r.id !== msgId || r.state !== "accepted")
          throw new CheckFailed(
            `channel.receipt of a delivery just made answered state ${r.state} for msgId ${r.id}, not accepted for ${msgId}`,
            [`asked ${msgId}`, canonical(r)],
          );
      }
      const w = { watchId: watchId ?? (await openWatch(s, j.target, baseline)) };
      const note = await new Promise<{ method: string; params: Record<string, unknown> } | null>(
        (done) => {
          const timer = setTimeout(() => done(null), SETTLE_MS);
          s.proc.conn.onWatch(w.watchId, (method, p) => {
            clearTimeout(timer);
            done({ method, params: p });
          });
        },
      );
      if (!note) {
        s.proc.conn.cancelWatch(w.watchId);
        throw new CheckFailed(
          `the watch past run ${baseline} did not settle within ${SETTLE_MS / 1000} s`,
        );
      }
      if (note.method !== "watch/settled")
        throw new CheckFailed(`the watch ended with ${note.method}, not watch/settled`, [
          canonical(note.params),
        ]);
      const o = note.params.observation as { runs?: number } | undefined;
      if ((o?.runs ?? 0) <= baseline)
        throw new CheckFailed(`watch/settled reports runs ${o?.runs}, not past ${baseline}`, [
          canonical(note.params),
        ]);
      summary = `delivered ${msgId}${channel.caps.receipt === "exact" ? ", receipt accepted with that msgId" : ""}, the watch settled at runs=${o?.runs}`;
    }),
  );
  return pass(summary);
}

async function openWatch(s: Session, target: unknown, afterRuns: number): Promise<string> {
  const w = (await must("channel.watch", s.call("channel.watch", { target, afterRuns }))) as {
    watchId: string;
  };
  return w.watchId;
}
