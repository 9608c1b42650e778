import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { intentsFor } from "../effects/journal.js";
import { EFFECT_MS, READ_MS, resolvePending } from "../effects/resolve.js";
import { runEffect } from "../effects/run-effect.js";
import { RefusedError, UnavailableError } from "../errors.js";
import type { LinkHost } from "../hosts/link-host.js";
import { ErrorReply } from "../plugin/call-errors.js";
import type { PluginProcess } from "../plugin/plugin-process.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { MAX_RETRIES, mapCallError } from "../seams/call.js";
import type { Store } from "../store/index.js";
import { type Mux, muxFor, type Pane, type ViewCommand } from "../view/mux.js";
import { jobStillToStop } from "./job-guard.js";
import { jobRules, recordStopped } from "./job-rules.js";
import { agentOf, agentSubject, type JobRecord, putAgent } from "./records.js";

// The job seam's calls about one recorded job: its target, its stop (an
// effect, journaled), its view, and the instance fence every one of them
// passes first.

export interface JobTarget {
  host: LinkHost["target"]["host"];
  job: { kind: string; key: string; handle?: string };
  agent: { workstream: string; name: string; incarnation: number };
}

/** What a call about one recorded job works with, passed as one value. */
export interface JobCall {
  io: Io;
  store: Store;
  sup: Supervisor;
  h: LinkHost;
  j: JobRecord;
  target: JobTarget;
}

export function jobTarget(h: LinkHost, j: JobRecord, incarnation: number): JobTarget {
  return {
    host: h.target.host,
    job: { kind: j.kind, key: j.key, ...(j.handle ? { handle: j.handle } : {}) },
    agent: { workstream: j.workstream, name: j.agent, incarnation },
  };
}

export const nextVerb = (ws: string, name: string) => `mu agent close ${name} -w ${ws}`;

/** Resolves what is pending on the agent before anything else is done to it. */
export async function resolveAgent(
  io: Io,
  store: Store,
  sup: Supervisor,
  ws: string,
  name: string,
  next: string,
): Promise<void> {
  const subject = agentSubject(ws, name);
  // The common case, nothing pending and no view left, stays one read.
  const { left, any } = await store.read((db) => ({
    left: leftView(db, ws, name),
    any: intentsFor(db, subject).length > 0,
  }));
  if (!any && left === null) return;
  try {
    if (any) await resolvePending(io, store, sup, subject, next, jobRules);
  } finally {
    // A stop settled here (reissued after a close that could not finish),
    // or one a mu recorded and died before it killed the view: the agent is
    // gone, so no later verb would ever close that view but this one.
    await forgetLeftView(io, store, ws, name);
  }
}

/** The pane a closed agent's row still names: a view its job's stop outlived. */
export function leftView(db: Database, ws: string, name: string): string | null {
  const a = agentOf(db, ws, name);
  return a?.state === "closed" ? a.pane : null;
}

/**
 * Kills the view a closed agent's row still names, then lets the row forget
 * it, in that order, so a mu that dies between them leaves the pane
 * recorded. The row is cleared only while it still names that pane, closed:
 * a spawn of the name meanwhile has written its own.
 */
export async function forgetLeftView(
  io: Io,
  store: Store,
  ws: string,
  name: string,
): Promise<void> {
  const pane = await store.read((db) => leftView(db, ws, name));
  if (pane === null) return;
  await muxFor(io.ports).kill(pane);
  await store.write((db) => dropKilledView(db, ws, name, pane));
}

/** The row forgets a view once it is killed: only while it still names that pane, closed. */
export function dropKilledView(db: Database, ws: string, name: string, pane: string | null): void {
  const a = agentOf(db, ws, name);
  if (a && pane !== null && leftView(db, ws, name) === pane) putAgent(db, { ...a, pane: null });
}

/** The job's plugin, refused unless it answers as the instance the job is recorded under. */
export async function jobPlugin(
  sup: Supervisor,
  h: LinkHost,
  j: Pick<JobRecord, "instance" | "workstream" | "agent">,
): Promise<{ hello: InitializeResult; job: JobSeam; proc: PluginProcess }> {
  const { hello, proc } = await sup.ready(h.reg, ["job"]);
  if (hello.instance !== j.instance) {
    throw new RefusedError(
      "effect.stop-changed",
      "agent",
      `${j.workstream}/${j.agent} runs under instance '${j.instance}', but '${h.reg.name}' now answers as '${hello.instance}'; nothing was sent (stop-changed)`,
      { hint: "point the plugin back at that instance" },
    );
  }
  return { hello, job: hello.seams.job as JobSeam, proc };
}

/** job.stop as an effect; its answer ends the job's record. */
export async function stopJob(
  io: Io,
  store: Store,
  sup: Supervisor,
  h: LinkHost,
  j: JobRecord,
  target: JobTarget,
  guard: (db: Database) => void = () => {},
): Promise<void> {
  // A stop often cleans up after a call that timed out, which stops the
  // plugin: it must go to a fresh process, not be refused by the old one.
  await sup.afterStop(h.reg.name);
  await runEffect(
    { ports: io.ports, store, sup, reg: h.reg, instance: j.instance },
    {
      subject: agentSubject(j.workstream, j.agent),
      method: "job.stop",
      key: j.key,
      params: { target, key: j.key },
      timeoutMs: EFFECT_MS,
      before: (db) => {
        jobStillToStop(db, j);
        guard(db);
      },
      done: (db) => recordStopped(db, j.key, io.ports.liveness.self()),
    },
    nextVerb(j.workstream, j.agent),
  );
}

/**
 * A read about a recorded job (status, attach, a channel read or watch),
 * sent only while the plugin answers as the job's instance: the check runs
 * on the very process the request goes to, so a restart in between cannot
 * slip another instance in. Retryable errors are retried, as for any call.
 */
export async function fencedRead(
  io: Io,
  sup: Supervisor,
  h: LinkHost,
  j: Pick<JobRecord, "instance" | "workstream" | "agent">,
  method: string,
  params: Record<string, unknown>,
  timeoutMs = READ_MS,
  signal?: AbortSignal,
): Promise<{ result: unknown; proc: PluginProcess }> {
  for (let attempt = 0; ; attempt++) {
    const { proc } = await jobPlugin(sup, h, j);
    try {
      return { result: await proc.conn.request(method, params, { timeoutMs, signal }), proc };
    } catch (err) {
      if (err instanceof ErrorReply && err.kind === "retryable" && attempt < MAX_RETRIES) {
        await io.ports.clock.sleep(100 * (attempt + 1));
        continue;
      }
      throw mapCallError(h.reg.name, { method, effect: false }, err, attempt);
    }
  }
}

/** A new view of a running job: job.attach's, a read. */
export async function attachView(
  io: Io,
  sup: Supervisor,
  h: LinkHost,
  j: JobRecord,
  target: JobTarget,
): Promise<ViewCommand> {
  return (await fencedRead(io, sup, h, j, "job.attach", { target })).result as ViewCommand;
}

/**
 * Opens a pane, as one line of mu's when the backend cannot; `again` is the
 * verb that tries once more (a spawn's, a reattach's).
 */
export async function openPane(
  mux: Mux,
  ws: string,
  name: string,
  view: ViewCommand,
  again: string,
): Promise<Pane> {
  try {
    return await mux.open(ws, name, view);
  } catch (err) {
    throw new UnavailableError(
      "view.open",
      "view",
      `the ${mux.name} backend could not open a view for ${ws}/${name}: ${(err as Error).message}`,
      {
        hint: `check the mux backend (MU_MUX), then ${again}`,
      },
    );
  }
}
