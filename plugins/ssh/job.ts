import { createHash } from "node:crypto";
import { JOBCTL, LOOP } from "./job-scripts.js";
import type { Ran, RunOpts } from "./local-run.js";
import { STATE, shLine } from "./remote-scripts.js";
import { noRemoteRoot, type Params, PluginError } from "./rpc.js";
import { classify, q, type Ssh } from "./ssh.js";

// The job seam: one remote loop per job key, its state in files on the
// remote, so a lookup answers from the remote alone across crashes of mu
// and of the plugin.

type Target = { job?: { key?: string } };

/** A job key as a directory name: itself when it is tame, else its hash. */
export function jobDir(key: string): string {
  return /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/.test(key)
    ? key
    : `k-${createHash("sha256").update(key).digest("hex").slice(0, 40)}`;
}

export function keyOf(p: Params): string {
  const k = (p.target as Target | undefined)?.job?.key;
  if (!k) throw new PluginError("permanent", "mu-plugin-ssh: the call names no job");
  return k;
}

/**
 * The ops that change the remote. Once one of their commands may have run,
 * a lost connection is no proof that nothing happened, so it never answers
 * `retryable` (the protocol's "nothing happened").
 */
const EFFECTS = new Set(["start", "stop", "send", "interrupt", "abort"]);

/** One answer of a JOBCTL op: its line's tag and fields, the output from that line on, and where its first two lines end. */
export interface Answer {
  tag: string;
  fields: string[];
  raw: Buffer;
  end: number;
}

/**
 * The first answer line at or after byte `from` (anything a login script
 * printed before it is skipped). With `whole`, only once the line after it
 * ended too (a state's second line), so a reading read mid-stream is whole.
 */
function answerAt(out: Buffer, from: number, whole = false): Answer | undefined {
  const text = out.toString("latin1");
  const re = /^MU-([A-Z]+-[A-Z]+)(.*)$/gm;
  re.lastIndex = from;
  const m = re.exec(text);
  if (!m) return undefined;
  const nl1 = text.indexOf("\n", m.index);
  const nl2 = nl1 === -1 ? -1 : text.indexOf("\n", nl1 + 1);
  if (whole && nl2 === -1) return undefined;
  return {
    tag: m[1] ?? "",
    fields: (m[2] ?? "").trim().split(" ").filter(Boolean),
    raw: out.subarray(m.index),
    end: nl2 === -1 ? text.length : nl2 + 1,
  };
}

export class Jobs {
  constructor(
    private readonly ssh: Ssh,
    private readonly root: string,
    private readonly harness: string,
  ) {}

  /** Runs one JOBCTL op and returns its answer line's tag and fields, and the whole output. */
  async ctl(
    key: string,
    op: string,
    args: string[],
    signal?: AbortSignal,
    stdin = "",
  ): Promise<Answer> {
    const r = await this.session(key, op, args, { stdin, signal });
    return this.answer(op, r, answerAt(r.stdout, 0));
  }

  /** One session running a JOBCTL op. */
  private async session(key: string, op: string, args: string[], o: RunOpts): Promise<Ran> {
    const line = shLine(JOBCTL, [this.root, jobDir(key), op, ...args], q);
    await this.ssh.up(o.signal);
    return this.ssh.run(line, { ...o, timeoutMs: 20_000 });
  }

  /**
   * Runs an op that answers twice in one session (the watch: a reading, then
   * the wait's end). `first` gets the first answer as soon as it is whole;
   * the promise, the second, or undefined when the session ended with one.
   */
  async ctlTwice(
    key: string,
    op: string,
    args: string[],
    signal: AbortSignal,
    first: (a: Answer) => void,
  ): Promise<Answer | undefined> {
    let one: Answer | undefined;
    const r = await this.session(key, op, args, {
      signal,
      onStdout: (all) => {
        const a = one ? undefined : answerAt(all, 0, true);
        if (!a) return;
        one = a;
        first(a);
      },
    });
    if (!one) {
      first(this.answer(op, r, answerAt(r.stdout, 0)));
      return undefined;
    }
    return this.answer(op, r, answerAt(r.stdout, one.end));
  }

  private answer(op: string, r: Ran, a: Answer | undefined): Answer {
    if (!a) {
      if (r.timedOut)
        throw new PluginError("unknown-outcome", `mu-plugin-ssh: ${op} on the remote timed out`);
      throw classify(r.stderr, this.ssh.t.dest, r.code !== 255 || EFFECTS.has(op));
    }
    if (a.tag === "JOB-NOROOT") throw noRemoteRoot(this.root);
    return a;
  }

  /** How a person watches the job: its transcript, over a connection of its own. */
  view(key: string): { command: string; env: Record<string, string> } {
    const log = `${STATE}/jobs/${jobDir(key)}/log`;
    const remote = `cd ${q(this.root)} && exec tail -n 200 -F ${q(log)}`;
    const argv = ["ssh", ...this.ssh.base(), "-T", this.ssh.t.dest, remote];
    return { command: argv.map(q).join(" "), env: {} };
  }

  async start(p: Params, signal: AbortSignal): Promise<unknown> {
    const key = String(p.key);
    const spec = (p.spec ?? {}) as { cwd?: string; env?: Record<string, string> };
    const env = Object.entries(spec.env ?? {})
      .filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${q(String(v))}\n`)
      .join("");
    const r = await this.startOrFind(key, [spec.cwd ?? ".", this.harness, LOOP], env, signal);
    if (r.tag === "JOB-NOCWD")
      throw new PluginError("permanent", `mu-plugin-ssh: no directory '${spec.cwd}' on the remote`);
    if (r.tag === "JOB-FENCED")
      throw new PluginError("permanent", `mu-plugin-ssh: job key ${key} was fenced by a lookup`);
    // Another start of this key holds it, or one was cut before it finished:
    // this key's job may yet run, so nothing here is a refusal.
    if (r.tag === "JOB-PENDING")
      throw new PluginError(
        "unknown-outcome",
        `mu-plugin-ssh: job key ${key} is being started or fenced`,
      );
    return { view: this.view(key) };
  }

  /**
   * The start, and when its answer was lost on the way back, a look on the
   * remote for what it left: a job that runs is the start's answer; else
   * the outcome stays unknown, for mu's fenced lookup to settle.
   */
  private async startOrFind(key: string, args: string[], env: string, signal: AbortSignal) {
    try {
      return await this.ctl(key, "start", args, signal, env);
    } catch (err) {
      if (!(err instanceof PluginError) || err.kind !== "unknown-outcome" || signal.aborted)
        throw err;
      const found = await this.ctl(key, "lookup", ["0"], signal).catch(() => undefined);
      if (found?.tag !== "JOB-FOUND") throw err;
      return found;
    }
  }

  async lookup(p: Params, signal: AbortSignal): Promise<unknown> {
    const key = String(p.key);
    const r = await this.ctl(key, "lookup", [p.fence === true ? "1" : "0"], signal);
    if (r.tag === "JOB-FOUND")
      return { found: { handle: `ssh:${jobDir(key)}`, view: this.view(key) } };
    if (r.tag === "JOB-PENDING") return { pending: true };
    return { none: true };
  }

  /** A remote it cannot reach reads unknown, never a death. */
  async status(p: Params, signal: AbortSignal): Promise<unknown> {
    let r: Awaited<ReturnType<Jobs["ctl"]>>;
    try {
      r = await this.ctl(keyOf(p), "status", [], signal);
    } catch (err) {
      return { state: "unknown", reason: (err as Error).message.slice(0, 300) };
    }
    if (r.tag === "JOB-RUNNING") return { state: "running" };
    if (r.tag === "JOB-STOPPED") return { state: "ended", exit: null };
    if (r.tag === "JOB-DEAD") return { state: "lost", reason: "the job's process is gone" };
    return { state: "lost", reason: "no such job on the remote" };
  }

  async stop(p: Params, signal: AbortSignal): Promise<null> {
    const r = await this.ctl(String(p.key), "stop", [], signal);
    if (r.tag !== "JOB-STOPPED")
      throw new PluginError("unknown-outcome", "mu-plugin-ssh: the job's processes would not die");
    return null;
  }

  attach(p: Params): unknown {
    return this.view(keyOf(p));
  }

  async checkSteps(p: Params, signal: AbortSignal): Promise<unknown[]> {
    if (p.phase !== "agent") return [];
    // A template wrapped in `sh -c '… exec tool …'` names its tool after exec.
    const words = this.harness.trim().split(/\s+/);
    const wrapped =
      words[0] === "sh" && words[1] === "-c" ? /\bexec\s+([^\s;'"]+)/.exec(this.harness) : null;
    const tool = wrapped?.[1] ?? words[0] ?? "";
    const r = await this.ctl("check", "check", [tool], signal);
    const ok = r.tag === "JOB-HAS";
    return [
      {
        step: "harness",
        ok,
        detail: ok
          ? `'${tool}' is on the remote PATH`
          : `'${tool}' is not on the remote PATH: install it`,
      },
    ];
  }
}
