import { randomBytes } from "node:crypto";
import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { newKey, withMachine } from "./host-seam.js";
import type { RunContext, Session } from "./session.js";
import { profileTarget, type Target } from "./target.js";
import { CheckFailed, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The job seam's promises against real jobs: start, status running, stop,
// status ended; a stop of what already stopped resolves; a lookup finds a
// started job and answers none for a key never used; a repeat inside the
// dedupe window returns the first reply. Every job started is stopped.

export const EFFECT_MS = 60_000;
const SETTLE_MS = 30_000;
const POLL_MS = 250;

export interface JobTarget extends Target {
  job: { kind: string; key: string; handle?: string };
  agent: { workstream: string; name: string; incarnation: number };
}

export interface StartedJob {
  key: string;
  target: JobTarget;
  reply: { view?: unknown; handle?: string; baseline?: { runs: number; incarnation?: number } };
  stopped: boolean;
  firstMsgId?: string;
}

/** Where job calls go: a provider's machine acquired for the check, or the plugin's one backend. */
export async function onHost<T>(
  s: Session,
  ctx: RunContext,
  hello: InitializeResult,
  params: Record<string, string>,
  fn: (t: Target) => Promise<T>,
): Promise<T> {
  if (!hello.seams.host) return fn(profileTarget(hello));
  return withMachine(s, params, newKey(ctx), (m) => fn(m.target));
}

function specFor(job: JobSeam, name: string, params: Record<string, string>, msgId: string) {
  return {
    workstream: "mu-check",
    name,
    harness: params.harness ?? "claude",
    role: "full-access",
    cmd: params.cmd ?? params.harness ?? "claude",
    commandSource: "harness",
    cwd: ".",
    env: {},
    ...(job.firstTurn === "at-start"
      ? { firstPrompt: { text: "mu plugin check: reply with one word", msgId } }
      : {}),
  };
}

/** The params of one job.start on a fresh agent name; the key is the caller's or a new one. */
export function startCall(
  ctx: RunContext,
  job: JobSeam,
  where: Target,
  params: Record<string, string>,
  key = newKey(ctx),
) {
  const name = `check-${randomBytes(3).toString("hex")}`;
  const msgId = `msg-check-${randomBytes(6).toString("hex")}`;
  const target: JobTarget = {
    host: where.host,
    job: { kind: job.kind, key },
    agent: { workstream: "mu-check", name, incarnation: 1 },
  };
  return { target, key, spec: specFor(job, name, params, msgId), msgId };
}

export async function startJob(
  s: Session,
  ctx: RunContext,
  job: JobSeam,
  where: Target,
  params: Record<string, string>,
): Promise<{ started: StartedJob; params: Record<string, unknown> }> {
  const { msgId, ...call } = startCall(ctx, job, where, params);
  // The started job's target is a copy: the handle the reply names goes
  // there, never into the params a repeat must send again byte for byte.
  const target = structuredClone(call.target);
  const key = call.key;
  const reply = (await must(
    "job.start",
    s.call("job.start", call, EFFECT_MS),
  )) as StartedJob["reply"];
  const started: StartedJob = {
    key,
    target,
    reply,
    stopped: false,
    ...(job.firstTurn === "at-start" ? { firstMsgId: msgId } : {}),
  };
  if (reply.handle) started.target.job.handle = reply.handle;
  if (job.handle === "reply" && !reply.handle)
    throw new CheckFailed("a reply kind's job.start carried no handle", [canonical(reply)]);
  if (job.firstTurn === "at-start" && reply.baseline?.runs !== 0)
    throw new CheckFailed(
      `an at-start job.start answered baseline ${JSON.stringify(reply.baseline ?? null)}, not one with runs 0`,
      [canonical(reply)],
    );
  return { started, params: call };
}

export async function stopJob(s: Session, j: StartedJob, what = "job.stop"): Promise<void> {
  const r = await must(what, s.call("job.stop", { target: j.target, key: j.key }, EFFECT_MS));
  j.stopped = true;
  if (r !== null)
    throw new CheckFailed(`${what} answered ${clip(canonical(r))}, not null`, [canonical(r)]);
}

/** Runs fn with a started job, stopped afterwards whatever happens. */
export async function withJob<T>(
  s: Session,
  ctx: RunContext,
  job: JobSeam,
  where: Target,
  params: Record<string, string>,
  fn: (j: StartedJob, startParams: Record<string, unknown>) => Promise<T>,
): Promise<T> {
  const { started, params: startParams } = await startJob(s, ctx, job, where, params);
  try {
    return await fn(started, startParams);
  } finally {
    if (!started.stopped) await stopJob(s, started, "cleanup job.stop").catch(() => {});
  }
}

async function statusUntil(s: Session, j: StartedJob, want: (st: string) => boolean, due: string) {
  const until = s.now() + SETTLE_MS;
  for (;;) {
    const st = (await must("job.status", s.call("job.status", { target: j.target }))) as {
      state: string;
    };
    if (want(st.state)) return st;
    if (s.now() >= until)
      throw new CheckFailed(
        `job.status answered ${st.state} for ${SETTLE_MS / 1000} s where ${due} was due`,
        [canonical(st)],
      );
    await s.sleep(POLL_MS);
  }
}

export async function jobLifecycle(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  await onHost(s, ctx, hello, params, (where) =>
    withJob(s, ctx, job, where, params, async (j) => {
      await statusUntil(s, j, (st) => st === "running", "running");
      await stopJob(s, j);
      await statusUntil(s, j, (st) => st === "ended" || st === "lost", "ended");
    }),
  );
  return pass("started a job, status running, stopped it (null), status ended");
}

export async function jobIdempotency(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
  repeat: number,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const caps = job.start;
  const window = caps.dedupe?.exact ? caps.dedupe.windowMs : undefined;
  await onHost(s, ctx, hello, params, async (where) => {
    for (let round = 1; round <= repeat; round++) {
      try {
        await withJob(s, ctx, job, where, params, async (j, startParams) => {
          if (window !== undefined) {
            const again = await must(
              "a repeated job.start",
              s.call("job.start", startParams, EFFECT_MS),
            );
            if (canonical(again) !== canonical(j.reply))
              throw new CheckFailed(
                `a repeat of job.start inside the ${window} ms dedupe window did not return the first reply`,
                [`first: ${canonical(j.reply)}`, `repeat: ${canonical(again)}`],
              );
          }
          if (caps.lookup) {
            const found = (await must(
              "job.lookup",
              s.call("job.lookup", { target: j.target, key: j.key, fence: false }),
            )) as {
              found?: { handle?: string };
            };
            if (
              !found.found ||
              (j.reply.handle !== undefined && found.found.handle !== j.reply.handle)
            )
              throw new CheckFailed(
                `job.lookup of a started job answered ${clip(canonical(found))}, not found`,
                [`start: ${canonical(j.reply)}`, `lookup: ${canonical(found)}`],
              );
          }
          await stopJob(s, j);
          await stopJob(s, j, "a second job.stop of the stopped job");
        });
        if (caps.lookup) {
          // One key in both places, as mu sends it: a plugin may refuse a target naming another.
          const unused = newKey(ctx);
          const none = await must(
            "job.lookup",
            s.call("job.lookup", {
              target: { host: where.host, job: { kind: job.kind, key: unused } },
              key: unused,
              fence: false,
            }),
          );
          if (canonical(none) !== canonical({ none: true }))
            throw new CheckFailed(
              `job.lookup of a key never used answered ${clip(canonical(none))}, not none`,
              [canonical(none)],
            );
        }
      } catch (err) {
        if (err instanceof CheckFailed)
          throw new CheckFailed(`round ${round} of ${repeat}: ${err.detail}`, err.evidence);
        throw err;
      }
    }
  });
  const parts = ["a second stop resolves"];
  parts.push(
    window === undefined
      ? "no dedupe declared"
      : `a repeat inside the ${window} ms window returns the first reply`,
  );
  parts.push(
    caps.lookup
      ? "lookup finds a started job and answers none for an unused key"
      : "no lookup declared",
  );
  return pass(`${repeat} rounds: ${parts.join("; ")}`);
}
