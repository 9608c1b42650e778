import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { inFresh } from "./fresh.js";
import {
  EFFECT_MS,
  type JobTarget,
  onHost,
  type StartedJob,
  startCall,
  stopJob,
} from "./job-seam.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, pass, skip } from "./verdict.js";
import { clip } from "./wire.js";

// mu dies in the middle of a job.start as often as anywhere: the request
// was written, the plugin read it, and the process that would have answered
// is gone with mu. Its replay then asks lookup from a new process, and takes
// a none as final only once inFlightMs has passed since the send. The check
// does just that: a second process asks lookup while the start is in
// flight, the starting process is SIGKILLed with its group once a lookup
// sees the start (pending or found) or a second after the send, and lookups
// go on until the job is found or a none comes past the bound. A none past
// the bound and then the job after all is the broken promise; a job found
// must be what the identical start, sent again from a new process, returns.

type Reply = { found?: StartedJob["reply"]; pending?: true; none?: true; unknown?: string };

interface Asked {
  sentMs: number;
  reply: Reply;
}

/** How long after the send the starting process is killed, if no lookup saw the start first. */
const DELIVER_MS = 1_000;
/** A tenth of the bound between lookups, within these. */
const POLL_MS = { min: 200, max: 5_000 };
/** How long after a final none the key is asked once more, at most: a later landing goes unseen. */
const RECHECK_MAX_MS = 10_000;
/** Past the bound, how long a lookup may go on answering pending or unknown. */
const SETTLE_MS = 30_000;

/** Before any start: what the declaration leaves this check nothing to test with. */
export function inFlightSkip(h: InitializeResult): Outcome | undefined {
  const caps = h.seams.job?.start;
  if (!caps?.lookup)
    return skip("a start killed in flight is settled by lookup; no lookup declared");
  if (typeof caps.inFlightMs !== "number") return skip("the start declares no inFlightMs");
  return undefined;
}

export async function jobInFlight(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const caps = job.start;
  const bound = caps.inFlightMs as number;
  let out: Outcome = skip("no host to start a job on");
  await onHost(s, ctx, hello, params, async (where) => {
    const { msgId: _m, ...call } = startCall(ctx, job, where, params);
    const made: StartedJob[] = [];
    const watcher = await s.again();
    try {
      out = await killedInFlight(s, watcher, call, bound, caps.dedupe?.exact === true, made);
    } finally {
      await watcher.close();
      for (const j of made)
        if (!j.stopped) await inFresh(s, (p) => stopJob(p, j, "cleanup job.stop")).catch(() => {});
    }
  });
  return out;
}

async function killedInFlight(
  s: Session,
  watcher: Session,
  call: { target: JobTarget; key: string; spec: unknown },
  bound: number,
  dedupe: boolean,
  made: StartedJob[],
): Promise<Outcome> {
  const sender = await s.again();
  let answered: { atMs: number; job?: StartedJob["reply"] } | undefined;
  const pending = sender.call("job.start", call, EFFECT_MS);
  const t0 = s.now();
  const since = () => s.now() - t0;
  pending.then(
    (r) => {
      answered = { atMs: since(), job: r as StartedJob["reply"] };
    },
    () => {
      answered ??= { atMs: since() };
    },
  );
  let killedMs: number | undefined;
  try {
    return await watch();
  } finally {
    // A check cut short before the kill (a lookup refused) leaves no start of its own behind.
    if (killedMs === undefined) await sender.kill();
  }

  async function watch(): Promise<Outcome> {
    const ask = () =>
      must(
        "job.lookup",
        watcher.call("job.lookup", { target: call.target, key: call.key, fence: false }),
      ) as Promise<Reply>;
    const asked: Asked[] = [];
    let beforeKill: string | undefined;
    for (;;) {
      const sentMs = since();
      const reply = await ask();
      asked.push({ sentMs, reply });
      // Delivered: another process sees the start, or it has had a second to arrive.
      if (killedMs === undefined && (reply.pending || reply.found || since() >= DELIVER_MS)) {
        beforeKill = answered ? `the start had answered at +${answered.atMs} ms` : undefined;
        await sender.kill();
        killedMs = since();
      }
      if (reply.found || (reply.none && sentMs > bound)) break;
      if (sentMs > bound + SETTLE_MS)
        return pass(
          `the start's process SIGKILLed at +${killedMs} ms; lookups from another process still answered ${clip(canonical(reply))} ${sentMs} ms after the start was sent (not exercised: neither found nor none)`,
        );
      // Quick until the kill, so a start that lands fast is still caught in flight.
      const every = killedMs === undefined ? POLL_MS.min : Math.floor(bound / 10);
      await s.sleep(Math.min(POLL_MS.max, Math.max(POLL_MS.min, every)));
    }
    const last = asked.at(-1) as Asked;
    const show = () => [
      `start written at +0 ms; sender SIGKILLed at +${killedMs} ms${beforeKill ? ` (${beforeKill})` : ""}`,
      ...asked.map((a) => `lookup sent at +${a.sentMs} ms: ${clip(canonical(a.reply))}`),
    ];
    if (last.reply.none) {
      // Final for mu: anything that lands now lands behind its back.
      await s.sleep(Math.min(RECHECK_MAX_MS, bound + 1_000));
      const sentMs = since();
      const later = await ask();
      asked.push({ sentMs, reply: later });
      if (later.found) {
        made.push(started(call, later.found));
        throw new CheckFailed(
          `inFlightMs is ${bound}, yet a job.lookup sent ${last.sentMs} ms after the start was sent answered none, and the job was found at ${sentMs} ms`,
          show(),
        );
      }
      // The start answered with a job: it exists, whatever the lookups say, and mu's replay would start it again.
      const job = answered?.job;
      if (job) {
        made.push(started(call, job));
        throw new CheckFailed(
          `job.start answered with a job at +${answered?.atMs} ms, yet job.lookup from another process answered none past the declared inFlightMs ${bound} and again at +${sentMs} ms`,
          [...show(), `start: ${clip(canonical(job))}`],
        );
      }
      return pass(
        `the start, its process SIGKILLed at +${killedMs} ms, made nothing: lookups from another process answered none past the declared inFlightMs ${bound} and again at +${sentMs} ms (the kill came before the job was made)`,
      );
    }
    const first = last.reply.found as StartedJob["reply"];
    const j = started(call, first);
    made.push(j);
    let repeat = "";
    if (dedupe) {
      // A kind whose start reply names no handle is judged by a lookup after the repeat.
      const { again, after } = await inFresh(s, async (p) => {
        const again = await must("a repeated job.start", p.call("job.start", call, EFFECT_MS));
        if ((again as { handle?: string }).handle !== undefined) return { again, after: undefined };
        const after = (await must(
          "job.lookup",
          p.call("job.lookup", { target: call.target, key: call.key, fence: false }),
        )) as Reply;
        return { again, after };
      });
      const handle = (again as { handle?: string }).handle ?? after?.found?.handle;
      if (first.handle !== undefined && handle !== first.handle) {
        if (handle) made.push(started(call, { ...(again as StartedJob["reply"]), handle }));
        throw new CheckFailed(
          `the identical job.start, sent from a new process after the one starting it was SIGKILLed, ${after ? "left lookup finding" : "answered"} handle ${handle}, not the ${first.handle} lookup found`,
          [
            ...show(),
            `repeat: ${clip(canonical(again))}`,
            ...(after ? [`lookup after: ${clip(canonical(after))}`] : []),
          ],
        );
      }
      repeat = "; the identical start from a new process returned the job found";
    }
    await inFresh(s, (p) => stopJob(p, j));
    const nones = asked.filter((a) => a.reply.none).length;
    return pass(
      `${beforeKill ? "not provoked: " : ""}the start's process SIGKILLed at +${killedMs} ms${beforeKill ? ` (${beforeKill})` : ""}; another process's lookups answered none ${nones === 1 ? "once" : `${nones} times`} inside the declared inFlightMs ${bound}, then found it at +${last.sentMs} ms${repeat}`,
    );
  }
}

function started(call: { target: JobTarget; key: string }, reply: StartedJob["reply"]): StartedJob {
  const target = structuredClone(call.target);
  if (reply.handle) target.job.handle = reply.handle;
  return { key: call.key, target, reply, stopped: false };
}
