import { randomBytes } from "node:crypto";
import { isAbsolute } from "node:path";
import type { ExecResult } from "./exec-frame.js";
import { type Ran, runLocal } from "./local-run.js";
import { PUSH_FINISH, PUSH_PREP, shLine } from "./remote-scripts.js";
import { fitReply, noRemoteRoot, type Params, PluginError } from "./rpc.js";
import { classify, q, type Ssh } from "./ssh.js";

// link.fetch and link.push: real git over the shared connection. Every
// process either call starts on the remote (the push's own steps and the
// git-upload-pack or git-receive-pack at the far end) carries the call's run
// marker, so a call past its timeoutMs ends them all before it answers, as
// remoteOnTimeout "stopped" promises. Closing the local git alone would not:
// a remote git blocked on a file never notices its session went away.

/** Kills every remote process carrying a run's marker; undefined when that could not be confirmed. */
export type EndRun = (id: string) => Promise<unknown>;

const firstLine = (s: string) => (s.split("\n").find((l) => l.trim()) ?? "").trim().slice(0, 200);

export class LinkGit {
  constructor(
    private readonly ssh: Ssh,
    private readonly root: string,
    private readonly endRun: EndRun,
  ) {}

  /** A path on the remote as the login's directory sees it: under the root unless absolute. */
  private remotePath(path: string): string {
    return isAbsolute(path) || this.root === "." ? path : `${this.root}/${path}`;
  }

  /** A remote path as git's scp-like syntax names it. */
  private gitUrl(path: string): string {
    return `${this.ssh.t.dest}:${this.remotePath(path)}`;
  }

  /** A call that ran out of time or was cancelled: nothing of it may still run when it answers. */
  private async ended(id: string, timeoutMs: number): Promise<void> {
    if ((await this.endRun(id)) === undefined)
      throw new PluginError(
        "unknown-outcome",
        `mu-plugin-ssh: git ran past ${timeoutMs} ms and its remote side could not be confirmed stopped`,
      );
  }

  private async git(
    args: string[],
    id: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<ExecResult> {
    await this.ssh.up(signal, Date.now() + timeoutMs);
    const r = await runLocal("git", args, {
      timeoutMs,
      signal,
      env: {
        ...process.env,
        GIT_SSH_COMMAND: this.ssh.gitSshCommand(),
        GIT_SSH_VARIANT: "ssh",
        GIT_TERMINAL_PROMPT: "0",
      },
    });
    if (r.timedOut || r.aborted) await this.ended(id, timeoutMs);
    if (r.aborted) throw new PluginError("unknown-outcome", "mu-plugin-ssh: git was cancelled");
    const res: ExecResult = {
      exitCode: r.timedOut ? null : (r.code ?? 128),
      stdout: r.stdout.toString("utf8"),
      stderr: r.stderr,
      partial: false,
    };
    if (
      !r.timedOut &&
      r.code !== 0 &&
      /^ssh: |Permission denied|Host key verification failed/m.test(r.stderr)
    )
      throw classify(r.stderr, this.ssh.t.dest, false);
    // git's own answer to text the remote shell printed before it spoke.
    if (!r.timedOut && r.code !== 0 && /bad line length character/.test(r.stderr))
      throw new PluginError(
        "human",
        `mu-plugin-ssh: git over ssh met text the remote shell printed before git's own output (${firstLine(r.stderr)})`,
        "make the remote shell's start-up files print nothing in a non-interactive session; mu host check names the text",
      );
    fitReply(res);
    return res;
  }

  /** One of the push's own remote scripts, marked; null when it ran out of time (and was ended). */
  private async step(
    script: string,
    args: string[],
    id: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Ran | null> {
    const r = await this.ssh.run(`MU_SSH_RUN=${id} ${shLine(script, args, q)}`, {
      timeoutMs,
      signal,
    });
    if (r.timedOut || r.aborted) {
      await this.ended(id, timeoutMs);
      if (r.aborted)
        throw new PluginError("unknown-outcome", "mu-plugin-ssh: the push was cancelled");
      return null;
    }
    if (r.code === 255) throw classify(r.stderr, this.ssh.t.dest, true);
    return r;
  }

  fetch(p: Params, signal: AbortSignal): Promise<ExecResult> {
    const id = randomBytes(8).toString("hex");
    const url = this.gitUrl(String(p.remoteCwd));
    return this.git(
      [
        "-C",
        String(p.localRepo),
        "fetch",
        "-q",
        "--no-tags",
        `--upload-pack=MU_SSH_RUN=${id} git-upload-pack`,
        url,
        "HEAD",
      ],
      id,
      Number(p.timeoutMs ?? 20_000),
      signal,
    );
  }

  /**
   * Holds rev under refs/mu/pushed/<rev>, never a branch (a checked-out one
   * would refuse); a repository with an unborn HEAD also gets rev checked out.
   * The timeout is the whole call's, shared by its steps.
   */
  async push(p: Params, signal: AbortSignal): Promise<ExecResult> {
    const repo = String(p.remoteRepo);
    const rev = String(p.rev);
    const timeoutMs = Number(p.timeoutMs ?? 20_000);
    const began = Date.now();
    const left = () => Math.max(1, timeoutMs - (Date.now() - began));
    const id = randomBytes(8).toString("hex");
    const args = [this.root, repo, rev];
    const timedOut: ExecResult = { exitCode: null, stdout: "", stderr: "", partial: false };
    const prep = await this.step(PUSH_PREP, args, id, left(), signal);
    if (!prep) return timedOut;
    if (prep.code === 5) throw noRemoteRoot(this.root);
    const where = this.remotePath(repo);
    const why = firstLine(prep.stderr) || "no reason given";
    if (prep.code === 3)
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: the push could not make or enter the directory '${where}' on the remote (${why}); make it a directory the ssh user can write, or push to another repository path`,
      );
    if (prep.code === 6)
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: git init failed in '${where}' on the remote (${why}); check that git is installed there and the directory is writable`,
      );
    if (prep.code !== 0)
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: remote command failed (${prep.code}): ${firstLine(prep.stderr)}`,
      );
    const said = prep.stdout.toString("utf8");
    if (said.includes("MU-SSH-HAS")) return { exitCode: 0, stdout: "", stderr: "", partial: false };
    const r = await this.git(
      [
        "-C",
        String(p.localRepo),
        "push",
        "-q",
        `--receive-pack=MU_SSH_RUN=${id} git-receive-pack`,
        this.gitUrl(repo),
        `${rev}:refs/mu/pushed/${rev}`,
      ],
      id,
      left(),
      signal,
    );
    // A repository with a HEAD needs nothing more: the push made the ref.
    if (r.exitCode !== 0 || said.includes("MU-SSH-BORN")) return r;
    const fin = await this.step(PUSH_FINISH, args, id, left(), signal);
    if (!fin) return timedOut;
    if (fin.code === 5) throw noRemoteRoot(this.root);
    return { exitCode: fin.code ?? 1, stdout: "", stderr: fin.stderr, partial: false };
  }
}
