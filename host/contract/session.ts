import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Io } from "../cli/io.js";
import type { PluginProcess } from "../plugin/plugin-process.js";
import {
  READ_TIMEOUT_MS,
  type Ready,
  type Registration,
  Supervisor,
} from "../plugin/supervisor.js";
import type { Clock, Ports, ProcessSpawner } from "../ports/types.js";
import { protocolChecks } from "../protocol/checks.js";
import type { InitializeResult, SeamName } from "../protocol/declaration.js";
import { type Escapee, sweep, type Watch } from "./escapees.js";
import { type Made, tally } from "./made.js";
import type { Launcher } from "./subreaper.js";
import type { Target } from "./target.js";
import { WireLog } from "./wire.js";

// One fresh start of the plugin for one check, through the host's own
// supervisor (trust, spawn, handshake, load rules, stop sequence), with a
// tap on the pipes so the suite sees every byte the plugin wrote.

export const CANARY_VAR = "MU_PLUGIN_CANARY";
/** Set for one plugin process only; every descendant inherits it. */
export const MARK_VAR = "MU_CHECK_MARK";

/** What every start of one suite run shares, and what each start left behind. */
export interface RunContext {
  io: Io;
  reg: Registration;
  canary: string;
  /** Random per run: marker values and keys of two runs never meet. */
  runId: string;
  logs: StartLog[];
  /** Runs each start under a child subreaper (subreaper.ts); absent where that cannot be done. */
  launcher?: { launch: Launcher; reports: string };
  /** --host: where every link call goes, the probes' too. */
  linkTarget?: Target;
  /** Why there is no launcher, for the containment line. */
  noLauncher?: string;
  /** Every job key the starts asked for, so the end of the run can clear them. */
  made: Made;
  /** Set once `eof` saw the plugin outlive the stop sequence: later starts are not given the grace. */
  outlivesStop?: true;
}

export interface StartLog {
  /** The check that started the plugin. */
  check: string;
  mark: string;
  pgid?: number;
  wire: WireLog;
  escapees: Escapee[];
  /** Descendants of this start seen by any scan, or held by the launcher at the end: pid to start time. */
  known: Map<number, number>;
  /** Where the launcher writes what it still held when the plugin ended. */
  report?: string;
  /** A session the check's own script made on purpose (see Watch.spare). */
  spare?: string;
}

function tapped(base: ProcessSpawner, log: StartLog, launcher: readonly string[]): ProcessSpawner {
  return {
    async spawn(argv, opts) {
      // Trust was judged on the plugin's own argv; the launcher only wraps the exec.
      const child = await base.spawn([...launcher, ...argv], opts);
      log.pgid = child.pid;
      return {
        ...child,
        write: (bytes) => {
          const ok = child.write(bytes);
          if (ok) log.wire.sent(bytes);
          return ok;
        },
        // Inside the host's own listener, so the tap sees exactly its chunks.
        onStdout: (fn) =>
          child.onStdout((c) => {
            log.wire.received(c);
            fn(c);
          }),
        onStderr: (fn) =>
          child.onStderr((c) => {
            log.wire.stderr(c);
            fn(c);
          }),
      };
    },
  };
}

export class Session {
  private constructor(
    readonly log: StartLog,
    private readonly sup: Supervisor,
    private readonly ready: Ready,
    private readonly clock: Clock,
    private readonly ctx: RunContext,
    private readonly needs: readonly SeamName[],
  ) {}

  /** Another fresh start for the same check: a broken plugin is refused for the rest of a start. */
  again(): Promise<Session> {
    return Session.open(this.ctx, this.log.check, this.needs);
  }

  now(): number {
    return this.clock.now();
  }

  sleep(ms: number): Promise<void> {
    return this.clock.sleep(ms);
  }

  get hello(): InitializeResult {
    return this.ready.hello;
  }

  get proc(): PluginProcess {
    return this.ready.proc;
  }

  /** Starts the plugin as mu would; a start that fails is still logged for the wire checks. */
  static async open(ctx: RunContext, check: string, needs: readonly SeamName[]): Promise<Session> {
    const log: StartLog = {
      check,
      mark: `${ctx.runId}-${ctx.logs.length + 1}`,
      wire: new WireLog(),
      escapees: [],
      known: new Map(),
    };
    if (ctx.launcher) log.report = join(ctx.launcher.reports, `start-${ctx.logs.length + 1}`);
    ctx.logs.push(log);
    const ports: Ports = {
      ...ctx.io.ports,
      env: { ...ctx.io.ports.env, [CANARY_VAR]: ctx.canary, [MARK_VAR]: log.mark },
      spawner: tapped(
        ctx.io.ports.spawner,
        log,
        log.report ? (ctx.launcher?.launch(log.report) ?? []) : [],
      ),
    };
    const sup = new Supervisor(ports, protocolChecks());
    try {
      return new Session(log, sup, await sup.ready(ctx.reg, needs), ctx.io.ports.clock, ctx, needs);
    } catch (err) {
      await finish(sup, log);
      throw err;
    }
  }

  /** One request on this start's connection; the escapee scan runs after each. */
  async call(method: string, params: Record<string, unknown>, timeoutMs = READ_TIMEOUT_MS) {
    tally(this.ctx.made, method, params);
    try {
      const reply = await this.proc.conn.request(method, params, { timeoutMs });
      tally(this.ctx.made, method, params, reply);
      return reply;
    } finally {
      this.scan();
    }
  }

  /** Catches a helper outside the group while it still runs: it might be gone by close. */
  scan(): void {
    this.log.escapees.push(...sweep(watch(this.log, this.proc.pgid)));
  }

  close(): Promise<void> {
    this.scan();
    // Once eof has failed, each later start would wait out the whole grace
    // to be killed all the same (minutes over a run, for the most common
    // plugin bug) and prove nothing eof has not. A kill at the end of a start
    // is no harder on the plugin than the replay checks' kills.
    return finish(this.sup, this.log, this.ctx.outlivesStop ? 0 : undefined);
  }

  /** Ends this start as mu's death would: SIGKILL to the whole group, no stop sequence. */
  kill(): Promise<void> {
    this.scan();
    this.proc.killNow();
    return finish(this.sup, this.log);
  }
}

/** One start for one seam check, closed whatever the check does. */
export async function inSession<T>(
  ctx: RunContext,
  check: string,
  needs: readonly SeamName[],
  fn: (s: Session) => Promise<T>,
): Promise<T> {
  const s = await Session.open(ctx, check, needs);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

async function finish(sup: Supervisor, log: StartLog, graceMs?: number): Promise<void> {
  await sup.close(graceMs);
  log.wire.end();
  // The group is empty now, so whatever still carries the marker left it.
  // (Its own group is still excluded: a member mu's kill has not reaped yet
  // did not escape.)
  if (log.report) for (const [pid, start] of heldAtEnd(log.report)) log.known.set(pid, start);
  log.escapees.push(...sweep(watch(log, log.pgid)));
}

function heldAtEnd(report: string): [number, number][] {
  let text = "";
  try {
    text = readFileSync(report, "utf8");
  } catch {
    return []; // killed with its group, or never started
  }
  return text
    .split("\n")
    .map((l) => l.split(" ").map(Number))
    .filter((f): f is [number, number] => f.length === 2 && f.every(Number.isInteger));
}

function watch(log: StartLog, leader: number | undefined): Watch {
  return {
    name: MARK_VAR,
    value: log.mark,
    known: log.known,
    ...(leader ? { leader } : {}),
    ...(log.spare ? { spare: log.spare } : {}),
  };
}
