import { randomBytes } from "node:crypto";
import { type ExecResult, OUTPUT_CAP, parseFrame } from "./exec-frame.js";
import { LinkGit } from "./link-git.js";
import { runLocal } from "./local-run.js";
import { PERL_EXEC, PERL_PROBE } from "./perl-run.js";
import { LAUNCH, PROBE } from "./reaper.js";
import { EXEC, KILL, REACH, shLine } from "./remote-scripts.js";
import { noRemoteRoot, type Params, PluginError } from "./rpc.js";
import { classify, q, type Ssh } from "./ssh.js";

// The link seam: link.exec through the remote wrapper, fetch and push (link-git.ts) with
// real git over the shared connection, and the host-check steps.

export const MAX_SCRIPT_BYTES = 131072;
const KILL_MS = 15_000;

/** A killed run: its output so far, and whether a launcher held every process it started. */
interface Killed {
  result: ExecResult;
  held: boolean;
}

/**
 * Whether the remote's shell adds text of its own to a command's output:
 * git over ssh reads that text as its protocol and fails, so the reach
 * phase catches it here, where its cause can still be named.
 */
function quietStep(out: string): unknown {
  const noise = out.split("\n").find((l) => l !== "" && !l.startsWith("MU-SSH-"));
  if (noise === undefined)
    return {
      step: "quiet",
      ok: true,
      detail: "the remote shell adds nothing to a command's output",
    };
  return {
    step: "quiet",
    ok: false,
    detail: `the remote shell prints '${noise.slice(0, 60)}' before every command, which breaks git over ssh: make its start-up files (~/.bashrc, ~/.profile, ~/.zshenv…) print only in an interactive shell`,
  };
}

/** Whether a timed-out run can be ended, and proven ended, on this remote. */
function processesStep(out: string): unknown {
  if (!out.includes("MU-SSH-PROCS"))
    return {
      step: "processes",
      ok: false,
      detail: "setsid, /proc or GNU grep -z is missing: a timed-out run cannot be stopped",
    };
  if (!out.includes("MU-SSH-REAPER"))
    return {
      step: "processes",
      ok: "warn",
      detail:
        "no perl or python3 that can hold a run's processes (a child subreaper): a timed-out script that started a process in a new session with a cleared environment may leave it running, and host exec then says so",
    };
  return {
    step: "processes",
    ok: true,
    detail: "every process a run starts is held, so a timed-out run is ended whole",
  };
}

export class Link {
  private readonly git: LinkGit;

  constructor(
    private readonly ssh: Ssh,
    /** The remote directory every relative path is taken from ("." is the login directory). */
    private readonly root: string,
  ) {
    this.git = new LinkGit(ssh, root, (id) => this.kill(id));
  }

  /** Kills a run's remote tree, over a second connection if the shared one is stuck. */
  private async kill(id: string): Promise<Killed | undefined> {
    const line = shLine(KILL, [this.root, id, String(OUTPUT_CAP)], q);
    // The shared connection first (no handshake to pay); if it is stuck, a fresh one.
    for (const [fresh, timeoutMs] of [
      [false, 2_500],
      [true, KILL_MS],
    ] as const) {
      try {
        const r = await this.ssh.run(line, { timeoutMs, fresh });
        const f = parseFrame(r.stdout, id);
        if (f?.result) return { result: f.result, held: f.code === "-" };
      } catch {
        // try the other connection
      }
    }
    return undefined;
  }

  async exec(p: Params, signal: AbortSignal): Promise<ExecResult> {
    const script = Buffer.from(String(p.script ?? ""), "utf8");
    if (script.length > MAX_SCRIPT_BYTES)
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: the script is ${script.length} bytes, over maxScriptBytes ${MAX_SCRIPT_BYTES}`,
      );
    const cwd = String(p.cwd ?? ".");
    const timeoutMs = Number(p.timeoutMs ?? 20_000);
    const id = randomBytes(8).toString("hex");
    const args = [this.root, String(script.length), id, cwd, String(OUTPUT_CAP), LAUNCH, PERL_EXEC];
    const line = `MU_SSH_RUN=${id} ${shLine(EXEC, args, q)}`;
    // The timeout is the whole call's: time spent connecting comes out of it.
    const began = Date.now();
    await this.ssh.up(signal, began + timeoutMs);
    const left = Math.max(1, timeoutMs - (Date.now() - began));
    const r = await this.ssh.run(line, { stdin: script, timeoutMs: left, signal });
    if (r.timedOut || r.aborted) {
      const killed = await this.kill(id);
      if (!killed)
        throw new PluginError(
          "unknown-outcome",
          `mu-plugin-ssh: the script ran past ${timeoutMs} ms and its remote run could not be confirmed stopped`,
        );
      if (!killed.held)
        throw new PluginError(
          "unknown-outcome",
          `mu-plugin-ssh: the script ran past ${timeoutMs} ms and was killed by its process group and marker; the remote has no perl or python3 to hold a process that left both, so one may still run`,
        );
      return { ...killed.result, exitCode: null };
    }
    const f = parseFrame(r.stdout, id);
    if (f?.result) return f.result;
    if (f?.tag === "NOCWD")
      throw new PluginError("permanent", `mu-plugin-ssh: no directory '${cwd}' on the remote`);
    if (f?.tag === "NOROOT" || f?.tag === "NOWRITE") throw noRemoteRoot(this.root);
    if (f?.tag === "SHORT")
      throw new PluginError(
        "retryable",
        "mu-plugin-ssh: the script arrived cut short; it was not run",
      );
    const started = f?.tag === "STARTED";
    const err = classify(r.stderr, this.ssh.t.dest, started || r.code !== 255);
    if (err.kind !== "unknown-outcome") throw err;
    // A run that began and lost its connection may still be going: end it, and say so.
    const killed = await this.kill(id);
    if (!killed) throw err;
    throw new PluginError(
      "unknown-outcome",
      killed.held
        ? `${err.message}; the plugin then stopped the run and everything it started: it may have run in part, and runs no more`
        : `${err.message}; the plugin then killed the run's process group and marked processes`,
    );
  }

  fetch(p: Params, signal: AbortSignal): Promise<ExecResult> {
    return this.git.fetch(p, signal);
  }

  push(p: Params, signal: AbortSignal): Promise<ExecResult> {
    return this.git.push(p, signal);
  }

  async checkSteps(p: Params, signal: AbortSignal): Promise<unknown[]> {
    const phase = String(p.phase);
    if (phase === "template") {
      const r = await runLocal("ssh", ["-G", ...this.ssh.base(), this.ssh.t.dest], {
        timeoutMs: 5_000,
      });
      const cfg = r.stdout.toString("utf8");
      const get = (k: string) => new RegExp(`^${k} (.*)$`, "m").exec(cfg)?.[1] ?? "?";
      return [
        r.code === 0
          ? {
              step: "destination",
              ok: true,
              detail: `${get("user")}@${get("hostname")}:${get("port")}`,
            }
          : { step: "destination", ok: false, detail: r.stderr.split("\n")[0] || "ssh -G failed" },
      ];
    }
    if (phase !== "reach") return [];
    // An auth or host-key failure throws `human`: the check hands back to a person.
    const repo = typeof p.root === "string" ? p.root : "";
    const out = await this.ssh.must(
      shLine(REACH, [this.root, repo, PROBE, PERL_PROBE], q),
      15_000,
      signal,
    );
    const repoStep = repo
      ? [
          out.includes("MU-SSH-REPO")
            ? { step: "repo", ok: true, detail: `'${repo}' is a git repository` }
            : {
                step: "repo",
                ok: "warn",
                detail: `no repository at '${repo}' yet: mu host push makes it`,
              },
        ]
      : [];
    return [
      { step: "login", ok: true, detail: `logged in to ${this.ssh.t.dest}` },
      quietStep(out),
      { step: "sh", ok: out.includes("MU-SSH-SH"), detail: "sh runs scripts" },
      {
        step: "git",
        ok: out.includes("MU-SSH-GIT"),
        detail: out.includes("MU-SSH-GIT")
          ? "git is installed"
          : "git is missing: install it on the remote",
      },
      processesStep(out),
      ...repoStep,
      {
        step: "writable",
        ok: out.includes("MU-SSH-WRITABLE"),
        detail: `the remote root '${this.root}' ${out.includes("MU-SSH-WRITABLE") ? "is" : "is not"} writable`,
      },
    ];
  }
}
