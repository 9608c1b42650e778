import { firstLine, RefusedError, UnavailableError } from "../errors.js";
import { packageVersion } from "../package-root.js";
import type { Ports } from "../ports/types.js";
import type { InitializeResult, SeamName } from "../protocol/declaration.js";
import { PROTOCOL } from "../protocol/declaration.js";
import { ErrorReply, NoAnswer } from "./call-errors.js";
import type { CallOptions } from "./connection.js";
import { NOT_JSON } from "./envelope.js";
import { checkLoadRules } from "./load-rules.js";
import { GRACE_MS, PluginProcess, type ResultChecks, type StopRecord } from "./plugin-process.js";
import { type Stoppable, type TermSignal, terminator } from "./terminator.js";
import { checkTrust } from "./trust.js";

export const READ_TIMEOUT_MS = 10_000;

/**
 * What to do about a seam the plugin does not declare: a plugin registered
 * with it has since changed under mu (what mu recorded still needs it);
 * otherwise another plugin is wanted.
 */
export function seamHint(seam: string | undefined, reg?: Registration): string {
  const recorded = (reg?.declaration as { seams?: Record<string, unknown> } | undefined)?.seams;
  if (seam !== undefined && recorded?.[seam] !== undefined)
    return `it was registered with that seam and what mu recorded on it still needs it: run a version of '${reg?.name}' that declares it again (mu plugin list shows the seams it was registered with)`;
  return `mu plugin list shows the seams each plugin declares; use one that declares '${seam ?? "it"}'`;
}

export interface Registration {
  name: string;
  argv: string[];
  /** The declaration `plugin add` recorded; absent while adding. */
  declaration?: unknown;
  /**
   * Told the instance of the process a call is about to go to, and throws
   * when the call must not reach it: a call that names a recorded host,
   * retried after the plugin exited and came back under another instance.
   */
  fence?: (instance: string) => void;
}

export interface ProtocolChecks extends ResultChecks {
  /** Validates an initialize result; returns the schema errors (empty when valid). */
  initializeErrors(result: unknown): string[];
  digest(): string;
  /** Loads what checking a handshake, and the needed seams' answers, takes, ahead of them. */
  prepare?(needs: readonly SeamName[]): void;
}

export interface Ready {
  proc: PluginProcess;
  hello: InitializeResult;
}

/**
 * The plugins of one mu invocation: each starts on first need, at most one
 * process per plugin at a time, and a plugin that broke the protocol stays
 * refused until the invocation ends.
 */
export class Supervisor implements Stoppable {
  private readonly live = new Map<string, Promise<Ready>>();
  private readonly broken = new Map<string, string>();
  /** Every process started and not yet stopped, for the synchronous kill. */
  private readonly procs = new Set<PluginProcess>();
  readonly stops: { name: string; record: StopRecord }[] = [];

  constructor(
    private readonly ports: Ports,
    private readonly checks: ProtocolChecks,
  ) {
    terminator.add(this);
  }

  /** A started, handshaken plugin that passed trust and the load rules. */
  ready(reg: Registration, needs: readonly SeamName[] = []): Promise<Ready> {
    if (terminator.terminating) {
      return Promise.reject(
        new UnavailableError(
          "plugin.terminating",
          "plugin",
          `not starting '${reg.name}': mu is terminating`,
        ),
      );
    }
    const why = this.broken.get(reg.name);
    if (why !== undefined) {
      return Promise.reject(
        new UnavailableError(
          "plugin.broken",
          "plugin",
          `'${reg.name}' sent an invalid message earlier (${why})`,
          {
            hint: "fix the plugin; mu will not start it again in this invocation",
          },
        ),
      );
    }
    let p = this.live.get(reg.name);
    if (!p) {
      p = this.launch(reg, needs);
      this.live.set(reg.name, p);
      p.catch(() => this.live.delete(reg.name));
      return p;
    }
    // Already running for another caller: this caller's needs still count.
    return p.then((r) => {
      const missing = needs.find((n) => !r.hello.seams[n]);
      if (missing) {
        throw new RefusedError(
          "load.seam.missing",
          "plugin",
          `'${reg.name}' refused (seam.missing): declares no '${missing}' seam, which is needed here`,
          { hint: seamHint(missing, reg) },
        );
      }
      return r;
    });
  }

  /**
   * Waits out a stop sequence already under way for the plugin, so that the
   * next ready() starts a fresh process rather than handing out one that
   * refuses every call. For a call that must reach the plugin (a cleanup's
   * stop); a plugin that is running, or not started, is left as it is.
   */
  async afterStop(name: string): Promise<void> {
    const cur = this.live.get(name);
    if (!cur) return;
    const r = await cur.catch(() => undefined);
    if (!r || r.proc.state === "running") return;
    await r.proc.stop("normal", "mu is done");
    if (this.live.get(name) === cur) this.live.delete(name);
  }

  /** One call, its NoAnswer and ErrorReply left to the caller to classify. */
  async call(
    reg: Registration,
    method: string,
    params: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<unknown> {
    if (opts.signal?.aborted)
      throw new NoAnswer(method, "not-sent", `${method} cancelled before it was sent`);
    const notSent = () => new NoAnswer(method, "not-sent", `${method} not sent: mu is terminating`);
    if (terminator.terminating) throw notSent();
    const { proc, hello } = await this.ready(reg);
    // The signal may have come while the plugin was starting.
    if (terminator.terminating) throw notSent();
    reg.fence?.(hello.instance);
    return proc.conn.request(method, params, opts);
  }

  private async launch(reg: Registration, needs: readonly SeamName[]): Promise<Ready> {
    const path = reg.argv[0] ?? "";
    await checkTrust(this.ports.fs, this.ports.uid, reg.name, path, reg.declaration !== undefined);
    // A signal may have come while trust was checked.
    if (terminator.terminating) {
      throw new UnavailableError(
        "plugin.terminating",
        "plugin",
        `not starting '${reg.name}': mu is terminating`,
      );
    }
    let proc: PluginProcess;
    try {
      proc = await PluginProcess.start(this.ports, reg.name, reg.argv, this.checks, (p, record) =>
        this.stopped(p, record),
      );
      this.procs.add(proc);
      // ...or while it was spawned: stop it at once, as the signal asks.
      if (terminator.terminating) {
        await proc.stop("signal", "mu is terminating");
        throw new UnavailableError(
          "plugin.terminating",
          "plugin",
          `not starting '${reg.name}': mu is terminating`,
        );
      }
    } catch (err) {
      if (err instanceof UnavailableError) throw err;
      throw new RefusedError(
        "plugin.start",
        "plugin",
        `'${reg.name}' could not be started: ${firstLine(String((err as Error).message))}`,
        {
          hint: `check that ${path} is executable`,
        },
      );
    }
    let hello: unknown;
    const asked = proc.conn.request(
      "initialize",
      { protocol: { ...PROTOCOL }, mu: packageVersion() },
      { timeoutMs: READ_TIMEOUT_MS, bare: true },
    );
    // The plugin's own start-up is the longest wait of a short verb: the
    // validators load meanwhile rather than after its answer.
    try {
      this.checks.prepare?.(needs);
    } catch {
      // met again, and reported, when the answer is checked
    }
    try {
      hello = await asked;
    } catch (err) {
      await proc.stop("normal", "handshake failed");
      throw this.handshakeFailure(reg.name, proc, err);
    }
    const errors = this.checks.initializeErrors(hello);
    const violation = checkLoadRules(
      hello as InitializeResult,
      { name: reg.name, digest: this.checks.digest(), needs, recorded: reg.declaration },
      errors,
    );
    if (violation) {
      await proc.stop("normal", `load rule ${violation.rule}`);
      throw new RefusedError(
        `load.${violation.rule}`,
        "plugin",
        `'${reg.name}' refused (${violation.rule}): ${violation.message}`,
        {
          hint:
            violation.rule === "declaration.changed"
              ? `re-register it: mu plugin add ${reg.name} -- ${reg.argv.join(" ")}`
              : violation.rule === "seam.missing"
                ? seamHint(violation.seam, reg)
                : violation.rule === "name.mismatch"
                  ? `make its handshake's plugin.name '${reg.name}', or register it under the name it gives (the executable is then mu-plugin-<that name>)`
                  : undefined,
        },
      );
    }
    return { proc, hello: hello as InitializeResult };
  }

  private handshakeFailure(name: string, proc: PluginProcess, err: unknown): Error {
    const stderr = proc.stderrLine ? ` (stderr: ${proc.stderrLine})` : "";
    if (err instanceof ErrorReply) {
      return new RefusedError(
        "load.handshake.error",
        "plugin",
        `'${name}' refused (handshake.error): it answered initialize with an error: ${firstLine(err.message)}`,
        // A human error's remedy is the step a person must take; pass it on.
        err.remedy ? { hint: firstLine(err.remedy) } : {},
      );
    }
    if (err instanceof NoAnswer && proc.conn.brokenWhy) {
      return new RefusedError(
        "load.handshake.invalid",
        "plugin",
        `'${name}' refused (handshake.invalid): ${proc.conn.brokenWhy}${stderr}`,
        proc.conn.brokenWhy.startsWith(NOT_JSON)
          ? { hint: "stdout carries only JSON-RPC messages, one a line: write logs to stderr" }
          : {},
      );
    }
    return new UnavailableError(
      "plugin.handshake",
      "plugin",
      `'${name}' did not answer the handshake: ${firstLine((err as Error).message)}${stderr}`,
    );
  }

  private stopped(p: PluginProcess, record: StopRecord): void {
    this.stops.push({ name: p.name, record });
    this.procs.delete(p);
    if (p.conn.brokenWhy !== undefined) this.broken.set(p.name, p.conn.brokenWhy);
    // The next call starts the plugin again, unless it broke the protocol.
    const cur = this.live.get(p.name);
    void cur?.then(
      (r) => {
        if (r.proc === p) this.live.delete(p.name);
      },
      () => {},
    );
  }

  /** Stops every plugin (the normal exit of a verb); only `mu plugin check` asks another grace. */
  async close(graceMs = GRACE_MS): Promise<void> {
    await this.stopAll("normal", "mu is done", graceMs);
    terminator.remove(this);
  }

  stopForSignal(signal: TermSignal): Promise<void> {
    return this.stopAll("signal", `mu got ${signal}`);
  }

  private async stopAll(
    cause: StopRecord["cause"],
    detail: string,
    graceMs = GRACE_MS,
  ): Promise<void> {
    await Promise.all([...this.procs].map((p) => p.stop(cause, detail, graceMs)));
  }

  killNow(): void {
    for (const p of this.procs) p.killNow();
  }
}
