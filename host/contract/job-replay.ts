import { ErrorReply } from "../plugin/call-errors.js";
import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { inFresh } from "./fresh.js";
import {
  EFFECT_MS,
  type JobTarget,
  onHost,
  type StartedJob,
  startCall,
  startJob,
  stopJob,
} from "./job-seam.js";
import type { RunContext, Session } from "./session.js";
import type { Target } from "./target.js";
import { CheckFailed, describeCall, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The job seam as mu's replay meets it: mu dies with its plugin, so every
// answer it later relies on comes from a process that did not make the
// effect. Each step here runs in a fresh start, and the start that made the
// job is SIGKILLed with its group the moment it answers.

const SETTLE_MS = 30_000;
const POLL_MS = 250;

type Found = { found?: { handle?: string } };

async function mustFind(p: Session, j: StartedJob, when: string): Promise<void> {
  const r = (await must(
    "job.lookup",
    p.call("job.lookup", { target: j.target, key: j.key, fence: false }),
  )) as Found;
  if (!r.found || (j.reply.handle !== undefined && r.found.handle !== j.reply.handle))
    throw new CheckFailed(
      `job.lookup from a new process ${when} answered ${clip(canonical(r))}, not found${j.reply.handle ? ` with handle ${j.reply.handle}` : ""}`,
      [`start: ${canonical(j.reply)}`, `lookup: ${canonical(r)}`],
    );
}

async function readsRunning(p: Session, j: StartedJob): Promise<void> {
  const until = p.now() + SETTLE_MS;
  for (;;) {
    const st = (await must("job.status", p.call("job.status", { target: j.target }))) as {
      state: string;
    };
    if (st.state === "running") return;
    if (st.state !== "unknown" || p.now() >= until)
      throw new CheckFailed(
        `job.status from a new process answered ${st.state} for the job the killed process started`,
        [canonical(st)],
      );
    await p.sleep(POLL_MS);
  }
}

/** A null stop is proof: no later process may read the job running. */
async function readsStopped(p: Session, j: StartedJob): Promise<void> {
  const until = p.now() + SETTLE_MS;
  for (;;) {
    const st = (await must("job.status", p.call("job.status", { target: j.target }))) as {
      state: string;
    };
    if (st.state === "ended" || st.state === "lost") return;
    if (st.state === "running")
      throw new CheckFailed(
        "job.stop answered null, yet job.status from a new process reads running",
        [canonical(st)],
      );
    if (p.now() >= until)
      throw new CheckFailed(
        `after job.stop answered null, job.status from a new process read ${st.state} for ${SETTLE_MS / 1000} s`,
        [canonical(st)],
      );
    await p.sleep(POLL_MS);
  }
}

type StartParams = Omit<ReturnType<typeof startCall>, "msgId">;

/** A fenced lookup of a key never used: none, and from now on that key is closed. */
async function fence(
  p: Session,
  ctx: RunContext,
  job: JobSeam,
  where: Target,
  params: Record<string, string>,
): Promise<StartParams> {
  const { msgId: _m, ...call } = startCall(ctx, job, where, params);
  const r = await must(
    "a fenced job.lookup",
    p.call("job.lookup", { target: call.target, key: call.key, fence: true }),
  );
  if (canonical(r) !== canonical({ none: true }))
    throw new CheckFailed(
      `a fenced job.lookup of a key never used answered ${clip(canonical(r))}, not none`,
      [canonical(r)],
    );
  return call;
}

/**
 * A fenced none is what lets mu roll an attempt back; a start of that key
 * arriving afterwards (held up in a process mu gave up on: here the check's
 * first start, older than the fence) must then make nothing, and an error
 * it answers must be the truth.
 */
async function lateStartRefused(p: Session, call: StartParams): Promise<string> {
  const ask = { target: call.target, key: call.key };
  let reply: { handle?: string } | undefined;
  let refusal: ErrorReply | undefined;
  try {
    reply = (await p.call("job.start", call, EFFECT_MS)) as { handle?: string };
  } catch (err) {
    if (!(err instanceof ErrorReply)) throw new CheckFailed(describeCall(err), [describeCall(err)]);
    refusal = err;
  }
  const after = await must("job.lookup", p.call("job.lookup", { ...ask, fence: false }));
  const made = canonical(after) !== canonical({ none: true });
  if (reply !== undefined || made) {
    const target: JobTarget = structuredClone(call.target);
    const handle = reply?.handle ?? (after as Found).found?.handle;
    if (handle) target.job.handle = handle;
    await p.call("job.stop", { target, key: call.key }, EFFECT_MS).catch(() => {});
  }
  if (reply !== undefined)
    throw new CheckFailed(
      "a job.start after a fenced job.lookup of its key answered none took effect",
      [`start: ${canonical(reply)}`, `lookup after: ${canonical(after)}`],
    );
  const kind = refusal?.kind ?? "";
  if (made && (kind === "retryable" || kind === "permanent"))
    throw new CheckFailed(
      `a fenced job.start answered ${kind}, which says nothing happened, yet job.lookup then found the job`,
      [describeCall(refusal), `lookup after: ${canonical(after)}`],
    );
  if (made)
    throw new CheckFailed(
      "a job.start after a fenced job.lookup of its key answered none made a job",
      [describeCall(refusal), `lookup after: ${canonical(after)}`],
    );
  return `a start after a fenced none was refused (${kind}) and made nothing`;
}

export async function jobReplay(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const caps = job.start;
  const window = caps.dedupe?.exact ? caps.dedupe.windowMs : undefined;
  const said: string[] = [];
  await onHost(s, ctx, hello, params, async (where) => {
    let j: StartedJob | undefined;
    let fenced: StartParams | undefined;
    try {
      const first = await inFresh(s, (a) => startJob(a, ctx, job, where, params));
      j = first.started;
      const started = j;
      await inFresh(s, async (b) => {
        if (window !== undefined) {
          const again = await must(
            "a repeated job.start",
            b.call("job.start", first.params, EFFECT_MS),
          );
          if (canonical(again) !== canonical(started.reply))
            throw new CheckFailed(
              "the identical job.start sent to a new process did not return the first reply",
              [`first: ${canonical(started.reply)}`, `repeat: ${canonical(again)}`],
            );
          said.push("the identical start returned the first reply");
        }
        if (caps.lookup) await mustFind(b, started, "while the job runs");
        await readsRunning(b, started);
        await stopJob(b, started);
      });
      fenced = await inFresh(s, async (c) => {
        await readsStopped(c, started);
        if (caps.lookup) await mustFind(c, started, "after the job was stopped");
        await stopJob(c, started, "a job.stop from a new process of the stopped job");
        return caps.lookup && caps.fenceKey ? fence(c, ctx, job, where, params) : undefined;
      });
      said.push(
        caps.lookup
          ? "lookup found it running and stopped"
          : "status read it running, and not after the stop",
      );
    } finally {
      const left = j;
      if (left && !left.stopped)
        await inFresh(s, (p) => stopJob(p, left, "cleanup job.stop")).catch(() => {});
    }
    if (fenced) said.push(await lateStartRefused(s, fenced));
  });
  const missing: string[] = [];
  if (window === undefined) missing.push("no exact dedupe declared");
  if (!caps.lookup) missing.push("no lookup declared");
  else if (!caps.fenceKey) missing.push("no fenceKey declared");
  return pass(
    `each step from a new process, the one that started the job killed: ${said.join("; ")}${missing.length ? ` (not exercised: ${missing.join("; ")})` : ""}`,
  );
}
