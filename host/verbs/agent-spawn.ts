import type { Io } from "../cli/io.js";
import { crashPoint } from "../crash-point.js";
import { EFFECT_MS, READ_MS } from "../effects/resolve.js";
import { runEffect } from "../effects/run-effect.js";
import { envMs } from "../env-ms.js";
import { RefusedError, UnavailableError, UnknownOutcomeError, UsageError } from "../errors.js";
import { findLinkHost, type LinkHost, sameInstance } from "../hosts/link-host.js";
import { getHost } from "../hosts/records.js";
import { admit, claimTask, deadlineMarginMs } from "../jobs/admission.js";
import { deliver } from "../jobs/deliver.js";
import {
  attachView,
  fencedRead,
  jobPlugin,
  jobTarget,
  openPane,
  resolveAgent,
  stopJob,
} from "../jobs/job-calls.js";
import { recordStarted, rollBackSpawn, startReplyProblem } from "../jobs/job-rules.js";
import {
  agentOf,
  agentSubject,
  deleteJob,
  type JobRecord,
  jobOf,
  putAgent,
  putJob,
  putReceipt,
} from "../jobs/records.js";
import { makeSite, planSite, removeSite, siteRepo } from "../jobs/site.js";
import { checkName } from "../names.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { JobSeam, Seams } from "../protocol/declaration.js";
import { openLink } from "../seams/link.js";
import { openStore, type Store } from "../store/index.js";
import {
  livesThroughWindow,
  type Mux,
  muxFor,
  requireCommandLines,
  type ViewCommand,
} from "../view/mux.js";
import { withPlugins } from "./with-plugins.js";

// mu agent spawn on a plugin host, in the spec's order, each step before the
// next one's effect: refusals (nothing written), the job record, job.start
// (journaled), the view, readiness. A failure after the start stops the job
// before the record goes. A spawn whose start was resolved by a later verb
// (or whose mu died after the start) resumes at the view.

export interface SpawnOptions {
  host: string;
  workstream?: string;
  worktree?: boolean;
  from?: string;
  task?: string;
  send?: string;
  command?: string;
  role?: string;
  harness?: string;
}

export const DEFAULT_SPAWN_JOB_MS = 30_000;

interface Honours {
  command: boolean;
  env: boolean;
  sockets: boolean;
  roles: string[];
}

/** What the kind honours; absent means the environment and the full-access role only. */
function honoursOf(job: JobSeam): Honours {
  const h = job.honours ?? {};
  return {
    command: h.command ?? false,
    env: h.env ?? true,
    sockets: h.sockets ?? false,
    roles: h.roles ?? ["full-access"],
  };
}

function spawnJobMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_SPAWN_JOB_MS", DEFAULT_SPAWN_JOB_MS);
}

/** The first prompt a spawn gives: --send's text, or a --task's brief. */
function firstPrompt(opts: Pick<SpawnOptions, "send" | "task">): string | undefined {
  return opts.send ?? (opts.task !== undefined ? `Work on task ${opts.task}.` : undefined);
}

/** Step 1: every refusal that needs no call and writes nothing. */
function refusals(h: LinkHost, name: string, opts: SpawnOptions, mux: Mux, role: string): JobSeam {
  const seams = (h.reg.declaration as { seams?: Seams } | undefined)?.seams ?? {};
  const job = seams.job;
  const p = h.reg.name;
  if (!job) {
    throw new UsageError(
      "spawn.no-job",
      "agent",
      h.provider
        ? `host '${opts.host}' comes from provider '${p}', which declares no job seam, so it takes no agent`
        : `host '${opts.host}' is a link-only host: plugin '${p}' declares no job seam, so it takes no agent`,
      { hint: "spawn on a host whose plugin declares the job seam" },
    );
  }
  const honours = honoursOf(job);
  if (role !== "full-access" && !honours.roles.includes(role)) {
    throw new UsageError(
      "spawn.honours.role",
      "agent",
      `kind '${job.kind}' of '${p}' does not honour the ${role} role`,
      {
        hint: "spawn without --role, or on a host whose kind honours it",
      },
    );
  }
  if (opts.command !== undefined && !honours.command) {
    throw new UsageError(
      "spawn.honours.command",
      "agent",
      `kind '${job.kind}' of '${p}' does not honour --command`,
      {
        hint: "spawn without --command to run the harness's own",
      },
    );
  }
  if (!job.channel) {
    throw new UsageError(
      "spawn.no-channel",
      "agent",
      `kind '${job.kind}' of '${p}' declares no channel, and its agents' own channel is not driven`,
      {
        hint: "spawn on a kind that names a channel",
      },
    );
  }
  requireCommandLines(mux, "spawn.mux");
  if (job.firstTurn === "at-start" && opts.send === undefined && opts.task === undefined) {
    throw new UsageError(
      "spawn.first-prompt",
      "agent",
      `kind '${job.kind}' takes its first prompt with the start, and none was given`,
      {
        hint: `give one: mu agent spawn ${name} --host ${opts.host} --send '<text>' (or --task <id>)`,
      },
    );
  }
  return job;
}

export async function agentSpawn(io: Io, name: string, opts: SpawnOptions): Promise<void> {
  const ws = opts.workstream ?? "main";
  for (const [what, v] of [
    ["agent name", name],
    ["workstream", ws],
  ] as const) {
    checkName(what, v, "agent.name");
  }
  if (opts.task !== undefined && opts.send !== undefined) {
    throw new UsageError("spawn.task-and-send", "usage", "give --task or --send, not both", {
      hint: "--task gives the agent the task's brief as its first prompt",
    });
  }
  const role = opts.role ?? "full-access";
  if (role !== "full-access" && role !== "read-only") {
    throw new UsageError(
      "spawn.role",
      "usage",
      `--role '${role}' is not one of full-access, read-only`,
      { hint: "leave it out for full-access" },
    );
  }
  const store = openStore(io.ports);
  const h = await store.read((db) => findLinkHost(db, opts.host));
  const mux = muxFor(io.ports);
  const declared = refusals(h, name, opts, mux, role);
  if (opts.from !== undefined && !opts.worktree) {
    throw new UsageError(
      "spawn.from-alone",
      "usage",
      "--from only means something with --worktree",
      { hint: "add --worktree, or drop --from" },
    );
  }
  const plan = opts.worktree ? planSite(h, opts.host, opts.from, ws, name) : undefined;
  const next = `mu agent spawn ${name} --host ${opts.host} -w ${ws}`;
  await withPlugins(io, async (sup) => {
    await resolveAgent(io, store, sup, ws, name, next);
    const before = await store.read((db) => ({
      job: jobOf(db, ws, name),
      agent: agentOf(db, ws, name),
    }));
    if (before.job?.state === "starting") {
      // Resolved above and still starting: its start was never journaled, so
      // never sent, unless the mu that wrote it is still at work on it.
      const stale = before.job;
      refuseWhileWriterLives(io, stale);
      await store.write((db) => rollBackSpawn(db, stale.key));
      before.job = undefined;
    }
    if (before.job) {
      // Only a job whose view was never opened resumes here. A live row
      // whose view died is not resumed: a bound job ended with its view, a
      // detached one is reattached (mu agent reattach).
      const viewless = before.agent?.state !== "live";
      if (before.job.state === "running" && before.job.host === opts.host && viewless) {
        return finish(io, store, sup, h, mux, before.job, opts, "resumed");
      }
      throw new RefusedError(
        "agent.exists",
        "agent",
        `${ws}/${name} already runs on host ${before.job.host}`,
        {
          hint: `close it first: mu agent close ${name} -w ${ws}`,
        },
      );
    }
    const { hello } = await sup.ready(h.reg, ["job", "channel"]);
    sameInstance(opts.host, h.reg.name, h.instance, hello.instance, h.profile !== undefined);
    const job = hello.seams.job ?? declared;
    const atStart = job.firstTurn === "at-start";
    const key = `job-${io.ports.random.hex(8)}`;
    const msgId = `msg-${io.ports.random.hex(8)}`;
    const text = firstPrompt(opts);
    const spec: Record<string, unknown> = {
      workstream: ws,
      name,
      harness: opts.harness ?? "claude",
      role,
      cmd: opts.command ?? opts.harness ?? "claude",
      commandSource: opts.command === undefined ? "harness" : "command",
      cwd: plan?.tree ?? ".",
      env: honoursOf(job).env ? { MU_AGENT: `${ws}/${name}` } : {},
      ...(atStart && text !== undefined ? { firstPrompt: { text, msgId } } : {}),
    };
    const now = io.ports.clock.now();
    const margin = deadlineMarginMs(io.ports.env);
    // Step 2: the record, the name's fence, the host's admission and (at
    // start) the placeholder, the claim and the first delivery's receipt, in
    // one commit before anything is sent.
    const record = await store.write((db) => {
      if (jobOf(db, ws, name)) {
        throw new RefusedError("agent.exists", "agent", `${ws}/${name} already exists`, {
          hint: `close it first: mu agent close ${name} -w ${ws}`,
        });
      }
      // The host as it is now, in this commit: it may have been found lost
      // or drained since the verb began.
      const host = h.provider ? getHost(db, opts.host) : undefined;
      if (h.provider) {
        if (!host) throw new Error(`host ${opts.host} vanished during the spawn`);
        admit(db, host, now, margin);
      }
      if (opts.task !== undefined) claimTask(db, opts.task, `${ws}/${name}`);
      const incarnation = (agentOf(db, ws, name)?.incarnation ?? 0) + 1;
      const j: JobRecord = {
        key,
        workstream: ws,
        agent: name,
        host: opts.host,
        plugin: h.reg.name,
        instance: hello.instance,
        kind: job.kind,
        viewKind: job.view,
        handle: null,
        state: "starting",
        spec,
        view: null,
        firstMsgId: atStart ? msgId : null,
        firstInc: null,
        owesCollect: plan !== undefined,
        site: plan?.tree ?? null,
        localRepo: plan?.localRepo ?? null,
        collectFailures: 0,
        nextCollectAt: null,
        taskId: opts.task ?? null,
        writer: io.ports.liveness.self(),
        createdAt: now,
        updatedAt: now,
      };
      putJob(db, j);
      putAgent(db, {
        workstream: ws,
        name,
        incarnation,
        jobKey: key,
        host: opts.host,
        channelPlugin: h.reg.name,
        channel: job.channel ?? "",
        pane: null,
        // An on-send kind's row stays out of sight until its view runs; it is
        // written now only to hold the incarnation the start is sent with.
        state: atStart ? "placeholder" : "closed",
        channelInc: null,
        // An at-start agent's first turn is the start's: its wait counts from 0.
        waitAfter: atStart ? 0 : null,
        createdAt: now,
      });
      if (atStart)
        putReceipt(db, { msgId, workstream: ws, agent: name, state: "sending", createdAt: now });
      return { j, incarnation };
    });
    const target = jobTarget(h, record.j, record.incarnation);
    // Step 3: the site. Nothing runs yet, so a failure only takes the record back.
    const link = plan ? await openLink(io, sup, opts.host, h) : undefined;
    if (plan && link) {
      try {
        await makeSite(link, plan);
      } catch (err) {
        await store.write((db) => rollBackSpawn(db, key));
        throw err;
      }
    }
    try {
      await runEffect(
        { ports: io.ports, store, sup, reg: h.reg, instance: hello.instance },
        {
          subject: agentSubject(ws, name),
          method: "job.start",
          key,
          params: { target, key, spec },
          timeoutMs: EFFECT_MS,
          check: (r) => startReplyProblem(job.handle, atStart, r as never),
          // In the intent's commit: a record taken back meanwhile means no start.
          before: (db) => {
            if (jobOf(db, ws, name)?.key !== key) {
              throw new RefusedError(
                "spawn.taken-back",
                "agent",
                `the spawn of ${ws}/${name} was taken back by another mu before its start was sent`,
                {
                  hint: "nothing was started; spawn again",
                },
              );
            }
          },
          done: (db, r) => recordStarted(db, key, (r ?? {}) as never, io.ports.clock.now()),
          failed: (db) => rollBackSpawn(db, key),
        },
        next,
      );
    } catch (err) {
      // A start that definitely did not happen was rolled back: its tree goes too.
      if (plan && link && !(err instanceof UnknownOutcomeError))
        await removeSite(link, plan.repo, plan.tree);
      if (atStart && err instanceof UnknownOutcomeError) {
        throw new UnknownOutcomeError(
          "spawn.first-delivery-unknown",
          "agent",
          `the start of ${ws}/${name} carried its first delivery and has no definite answer, so delivery ${msgId} is unknown (key ${key}): ${err.message}`,
          { hint: `nothing was resent; resolve it with: mu agent check ${name} ${msgId} -w ${ws}` },
        );
      }
      throw err;
    }
    const started = await store.read((db) => jobOf(db, ws, name));
    if (!started) throw new Error("the job record vanished after its start");
    await finish(io, store, sup, h, mux, started, opts, "spawned");
  });
}

/** A starting record whose writer still lives is that mu's: refuse to take it back. */
export function refuseWhileWriterLives(io: Io, j: JobRecord): void {
  if (j.writer && io.ports.liveness.alive(j.writer)) {
    throw new RefusedError(
      "agent.starting",
      "agent",
      `${j.workstream}/${j.agent} is being spawned by mu pid ${j.writer.pid}`,
      { hint: "wait for that mu to finish, then run the verb again" },
    );
  }
}

/** Steps 5 and 6, and an on-send kind's first delivery. */
export async function finish(
  io: Io,
  store: Store,
  sup: Supervisor,
  h: LinkHost,
  mux: Mux,
  j: JobRecord,
  opts: Pick<SpawnOptions, "send" | "task">,
  verb: "spawned" | "resumed",
): Promise<void> {
  const ws = j.workstream;
  const name = j.agent;
  const row = await store.read((db) => agentOf(db, ws, name));
  const incarnation = row?.incarnation ?? 1;
  const target = jobTarget(h, j, incarnation);
  // Every call below names the recorded job: only to its instance.
  const { hello } = await jobPlugin(sup, h, j);
  const channel = hello.seams.channel?.name ?? "";
  // Undoes the spawn once the job may run: stop it, then let the record go.
  const fail = async (pane: string | null, why: string): Promise<never> => {
    if (pane && j.viewKind === "bound") await mux.kill(pane);
    let stopError: unknown;
    try {
      await stopJob(io, store, sup, h, j, target);
    } catch (err) {
      stopError = err;
    }
    if (pane && j.viewKind === "detached") await mux.kill(pane);
    if (stopError instanceof UnknownOutcomeError) {
      // The stop is journaled and pending: say so, with the verb that settles it.
      throw new UnknownOutcomeError(
        "spawn.failed.stop-unknown",
        "agent",
        `${ws}/${name} did not come up: ${why}; its job.stop may or may not have happened`,
        { hint: `run mu agent close ${name} -w ${ws} to settle it` },
      );
    }
    if (stopError !== undefined) {
      throw new UnavailableError(
        "spawn.failed.stop-failed",
        "agent",
        `${ws}/${name} did not come up: ${why}; stopping its job failed too (${(stopError as Error).message})`,
        { hint: `the job may still run: run mu agent close ${name} -w ${ws}` },
      );
    }
    // Stopped, so nothing is owed: the tree and the record go.
    let left = "";
    try {
      if (j.site) {
        const repo = siteRepo(h);
        if (repo) await removeSite(await openLink(io, sup, j.host, h), repo, j.site);
      }
    } catch (err) {
      left = `; its tree ${j.site} was left on ${j.host} (${(err as Error).message})`;
    }
    await store.write((db) => deleteJob(db, j.key));
    throw new UnavailableError(
      "spawn.failed",
      "agent",
      `${ws}/${name} did not come up: ${why}; the job was stopped${left}`,
      {
        hint: "see the plugin's and the backend's state, then spawn again",
      },
    );
  };
  let view: ViewCommand;
  try {
    view = (j.view as ViewCommand | null) ?? (await attachView(io, sup, h, j, target));
  } catch (err) {
    return fail(null, `no view to open (${(err as Error).message})`);
  }
  // A pane left by a mu that died between opening it and recording it would
  // run on unseen: no view of this agent is live here, so any pane is such.
  for (const orphan of await mux.panesOf(ws, name)) await mux.kill(orphan);
  let pane: string;
  const openedAt = io.ports.clock.now();
  try {
    pane = (await openPane(mux, ws, name, view)).id;
  } catch (err) {
    return fail(null, (err as Error).message);
  }
  await crashPoint("view.pane-opened", io.ports);
  await store.write((db) => {
    const a = agentOf(db, ws, name);
    putAgent(db, {
      workstream: ws,
      name,
      incarnation,
      jobKey: j.key,
      host: j.host,
      channelPlugin: h.reg.name,
      channel,
      pane,
      state: "live",
      channelInc: j.firstInc ?? a?.channelInc ?? null,
      waitAfter: a?.waitAfter ?? (j.firstMsgId !== null ? 0 : null),
      createdAt: a?.createdAt ?? io.ports.clock.now(),
    });
  });
  // Step 6: an at-start kind's start carried its baseline; any other kind's
  // channel must answer one within MU_SPAWN_JOB_MS.
  if (j.firstMsgId === null) {
    const waitMs = spawnJobMs(io.ports.env);
    const deadline = io.ports.clock.now() + waitMs;
    let last = "no answer yet";
    for (;;) {
      const left = deadline - io.ports.clock.now();
      if (left <= 0)
        return fail(pane, `its channel gave no baseline within ${waitMs} ms (${last})`);
      try {
        const baseline = (
          await fencedRead(io, sup, h, j, "channel.baseline", { target }, Math.min(READ_MS, left))
        ).result;
        if (baseline !== null) {
          const b = baseline as { runs: number; incarnation?: number };
          await store.write((db) => {
            const a = agentOf(db, ws, name);
            if (a)
              putAgent(db, { ...a, waitAfter: b.runs, channelInc: b.incarnation ?? a.channelInc });
          });
          break;
        }
        last = "the channel answered null";
      } catch (err) {
        last = (err as Error).message;
      }
      await io.ports.clock.sleep(Math.min(100, Math.max(0, deadline - io.ports.clock.now())));
    }
  }
  // Counted from the pane's opening: readiness above may have used it up.
  if (!(await livesThroughWindow(mux, io.ports, pane, openedAt)))
    return fail(pane, `its view (pane ${pane}) died after it was opened`);
  io.out(`${verb} ${ws}/${name} on ${j.host} (job ${j.key}, view ${pane})\n`);
  const text = firstPrompt(opts);
  // A resumed spawn still owes its first prompt unless one was delivered
  // (or journaled) to this job already.
  const delivered = await store.read(
    (db) =>
      db.exec("SELECT 1 FROM receipts WHERE workstream = ? AND agent = ? AND created_at >= ?", [
        ws,
        name,
        j.createdAt,
      ]).length > 0,
  );
  if (j.firstMsgId === null && text !== undefined && !delivered) {
    await firstSend(io, store, sup, h, j, target, text, channel);
  }
}

/** An on-send kind's first prompt: a delivery, journaled like any other. */
async function firstSend(
  io: Io,
  store: Store,
  sup: Supervisor,
  h: LinkHost,
  j: JobRecord,
  target: ReturnType<typeof jobTarget>,
  text: string,
  channel: string,
): Promise<void> {
  const { msgId, result } = await deliver(io, store, sup, h, j, target, channel, {
    method: "channel.send",
    params: { text, mode: "followUp", force: false, firstPrompt: true },
    withMsgId: true,
  });
  io.out(`sent ${msgId} to ${j.workstream}/${j.agent} (baseline ${result?.baseline ?? "?"})\n`);
}
