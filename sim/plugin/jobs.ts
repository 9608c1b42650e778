import { join } from "node:path";
import { shQuote as q } from "../../host/sh-quote.js";
import { DEFAULT_TURN_MS, deliver, newAgent } from "./agents.js";
import { repeatOf } from "./dedupe.js";
import type { SimJob, World, WorldState } from "./world.js";

// The job side of the simulated world. A job is a record in the world, not a
// process: what runs for real is its view, a pane mu opens with the view
// command below. That command records its pid, so a bound job can end when
// its view dies, as the spec says it must.

interface JobDecl {
  handle: "pane" | "file" | "reply";
  view: "bound" | "detached";
  firstTurn?: "on-send" | "at-start";
  start: { dedupe?: { windowMs: number } };
  outlivesHost?: boolean;
}

/** The handle of the machine a call's target names, if it names one. */
export function hostHandle(target: unknown): string | undefined {
  const handle = (target as { host?: { handle?: unknown } } | undefined)?.host?.handle;
  return typeof handle === "string" ? handle : undefined;
}

function jobKey(target: unknown): string {
  return String((target as { job?: { key?: string } } | undefined)?.job?.key ?? "");
}

/**
 * The job a call's target names, as a plugin that files its jobs by handle
 * would find it: a reply kind's target must carry the handle its start
 * returned, and a handle mu names must be the job's own (a pane kind never
 * gave one out). Anything else is no job of this plugin's.
 */
function targetJob(jobs: Record<string, SimJob> | undefined, target: unknown, kind?: string) {
  const j = jobs?.[jobKey(target)];
  const handle = (target as { job?: { handle?: unknown } } | undefined)?.job?.handle;
  if (!j || (handle === undefined && kind !== "reply")) return j;
  return handle === j.handle ? j : undefined;
}

/** What start answers for a key a fenced lookup already answered none for. */
const FENCED: Record<string, unknown> = {};

export class Jobs {
  constructor(
    private readonly world: World,
    private readonly decl: () => JobDecl | undefined,
    private readonly sha: (params: Record<string, unknown>) => string,
    private readonly alive: (pid: number) => boolean,
    /** When the call being answered arrived (before any fault held it up). */
    private readonly arrivedAt: () => number,
  ) {}

  private viewFor(key: string, agent: string): { command: string; env: Record<string, string> } {
    const pidFile = join(this.world.dir, `view-${encodeURIComponent(key)}.pid`);
    return {
      command: `echo $$ > ${q(pidFile)}; printf 'sim job %s for %s\\n' ${q(key)} ${q(agent)}; exec sleep 100000`,
      // The pid file is named in the env too, for a mux that runs no shell (the virtual engine's).
      env: { SIM_JOB: key, SIM_VIEW_PID_FILE: pidFile },
    };
  }

  private viewGone(key: string): boolean {
    const text = this.world.readFile(`view-${encodeURIComponent(key)}.pid`);
    if (text === null) return false; // never opened: nothing to have died
    return !this.alive(Number(text));
  }

  answer(
    method: string,
    params: Record<string, unknown>,
  ): { value: unknown } | { refused: string } | undefined {
    switch (method) {
      case "job.start": {
        // A start that reaches a machine the provider has lost or taken
        // back (held in a plugin that outlived its mu, say) cannot make a
        // job there, unless the kind's jobs outlive their host.
        const on = hostHandle(params.target);
        const h = Object.values(this.world.state().hosts ?? {}).find((x) => x.handle === on);
        if (on !== undefined && h?.released && !this.decl()?.outlivesHost)
          return { refused: `sim: the machine ${on} is gone; no job can start on it` };
        const reply = this.start(params);
        if (reply === FENCED)
          return {
            refused: `sim: key ${String(params.key)} was fenced by a lookup; nothing started`,
          };
        return { value: reply };
      }
      case "job.lookup":
        return { value: this.lookup(String(params.key), params.fence === true) };
      case "job.status":
        return { value: this.status(params.target) };
      case "job.stop":
        return { value: this.stop(String(params.key)) };
      case "job.attach": {
        const j = targetJob(this.world.state().jobs, params.target, this.decl()?.handle);
        if (j?.state !== "running")
          return { refused: "sim: no running job has that handle; nothing to attach to" };
        return { value: this.viewFor(j.key, j.agent) };
      }
      case "job.checkSteps":
        return { value: [{ step: "agent", ok: true, detail: "the sim runs any harness" }] };
      default:
        return undefined;
    }
  }

  /** Starts a job once per key; an exact repeat inside the dedupe window gets the first reply. */
  private start(params: Record<string, unknown>): unknown {
    const key = String(params.key);
    const spec = params.spec as {
      workstream: string;
      name: string;
      firstPrompt?: { text: string; msgId: string };
    };
    const d = this.decl();
    const ref = `${spec.workstream}/${spec.name}`;
    const sha = this.sha(params);
    const now = this.world.now();
    const turnMs = this.world.config().turnMs ?? DEFAULT_TURN_MS;
    let reply: Record<string, unknown> = {};
    this.world.update((s) => {
      const seen = repeatOf(s, `job:${key}`, sha, d?.start.dedupe?.windowMs, this.arrivedAt());
      if (seen) {
        reply = seen.result as Record<string, unknown>;
        return;
      }
      if (s.fenced?.[`job:${key}`] !== undefined && !s.jobs?.[key]) {
        reply = FENCED;
        return;
      }
      const effect = `job.start:${key}`;
      s.effects[effect] = (s.effects[effect] ?? 0) + 1;
      const handle = `sim-job-${key}-${s.effects[effect]}`;
      const before = s.agents?.[ref];
      const agent = newAgent(now, (before?.incarnation ?? 0) + 1);
      reply = { view: this.viewFor(key, ref) };
      if (d?.handle === "reply") reply.handle = handle;
      if (spec.firstPrompt) {
        deliver(agent, now, turnMs, spec.firstPrompt.text, spec.firstPrompt.msgId);
        reply.baseline = { runs: 0, incarnation: agent.incarnation };
      }
      s.agents = { ...s.agents, [ref]: agent };
      const job: SimJob = { key, handle, agent: ref, state: "running", reply };
      const on = hostHandle(params.target);
      if (on !== undefined) job.host = on;
      s.jobs = { ...s.jobs, [key]: job };
      s.dedupe = { ...s.dedupe, [`job:${key}`]: { sha, result: reply, at: now } };
    });
    return reply;
  }

  private lookup(key: string, fence: boolean): unknown {
    let j: SimJob | undefined;
    const now = this.world.now();
    this.world.update((s) => {
      j = s.jobs?.[key];
      if (!j && fence) s.fenced = { ...s.fenced, [`job:${key}`]: now };
    });
    if (!j) return { none: true };
    // A reply kind's found repeats its start reply; a file kind's is the handle alone.
    if (this.decl()?.handle === "file") return { found: { handle: j.handle } };
    return { found: { ...j.reply, handle: j.handle } };
  }

  private status(target: unknown): unknown {
    let out: unknown;
    this.world.update((s) => {
      const j = targetJob(s.jobs, target, this.decl()?.handle);
      if (!j) {
        out = { state: "lost", reason: "no such job in the sim" };
        return;
      }
      const key = j.key;
      if (j.state === "running" && this.decl()?.view === "bound" && this.viewGone(key)) {
        j.state = "ended";
        j.exit = null;
      }
      out = j.state === "running" ? { state: "running" } : { state: "ended", exit: j.exit ?? null };
    });
    return out;
  }

  /**
   * The machine `host` is gone: every job on it ends with it, unless the
   * kind declares that its jobs outlive their host.
   */
  hostLost(s: WorldState, host: string): void {
    if (this.decl()?.outlivesHost) return;
    for (const j of Object.values(s.jobs ?? {})) {
      if (j.host !== host || j.state !== "running") continue;
      j.state = "ended";
      j.exit = null;
      const a = s.agents?.[j.agent];
      if (a) a.turns = [];
    }
  }

  /** Idempotent: stopping what already stopped (or never started) succeeds and changes nothing. */
  private stop(key: string): null {
    this.world.update((s) => {
      const j = s.jobs?.[key];
      if (j?.state !== "running") return;
      j.state = "ended";
      j.exit = 0;
      s.effects[`job.stop:${key}`] = (s.effects[`job.stop:${key}`] ?? 0) + 1;
      const a = s.agents?.[j.agent];
      if (a) a.turns = [];
    });
    return null;
  }
}
