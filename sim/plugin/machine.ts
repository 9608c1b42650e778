import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { shQuote as q } from "../../host/sh-quote.js";
import { killTree } from "./kill-tree.js";
import type { World } from "./world.js";

// The link side of the simulated world: every host is a real directory under
// the world, its login directory, where scripts really run with /bin/sh. Fetch
// and push are git run there, so a scenario can check them with git itself.

/** Output beyond this is cut and the result says partial, well inside the 1 MiB line. */
const OUTPUT_MAX = 256 * 1024;

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

interface Target {
  host?: { name?: string; handle?: string };
}

/** The environment a script runs in: the plugin's own, never its host process's. */
export type ScriptEnv = Readonly<Record<string, string | undefined>>;

export class Machines {
  constructor(
    private readonly world: World,
    private readonly env: ScriptEnv,
    /** The virtual engine's switch point (SimIo.turn): taken before a script starts and after it ends. */
    private readonly turn: (at: "start" | "end") => Promise<void> = async () => {},
    /**
     * Frees a timed-out run's session: at once for a link whose remote is
     * gone by the answer, later for one still stopping after it, so a call
     * mu lets in too early shows in the machine's peak.
     */
    private readonly afterTimeout: (free: () => void) => void = (free) => free(),
  ) {}

  /** A provider's machine is known by its handle, a profile's by its name. */
  private machineOf(target: unknown): string {
    const h = (target as Target | undefined)?.host;
    return h?.handle ?? h?.name ?? "default";
  }

  loginDir(target: unknown): string {
    const dir = join(this.world.dir, "machines", encodeURIComponent(this.machineOf(target)));
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  private free(machine: string): void {
    this.world.update((s) => {
      const n = s.sessions?.[machine];
      if (n) n.active -= 1;
    });
  }

  /** A released or lost machine's directory: nothing of it is left. */
  remove(target: unknown): void {
    const dir = join(this.world.dir, "machines", encodeURIComponent(this.machineOf(target)));
    rmSync(dir, { recursive: true, force: true });
  }

  private at(target: unknown, path: string): string {
    return isAbsolute(path) ? path : join(this.loginDir(target), path);
  }

  exec(target: unknown, script: string, cwd: string, timeoutMs: number, leak?: string) {
    return this.run(target, script, this.at(target, cwd), timeoutMs, leak);
  }

  /**
   * Leaves FETCH_HEAD in localRepo naming the HEAD of remoteCwd on the
   * machine, and notes which commit that was: what a collect from there may
   * report (the explorer's check that a close reports its own tree's work).
   */
  async fetch(target: unknown, remoteCwd: string, localRepo: string, timeoutMs: number) {
    const remote = this.at(target, remoteCwd);
    const script = `git -C ${q(localRepo)} fetch --quiet ${q(remote)} HEAD`;
    const r = await this.run(target, script, this.loginDir(target), timeoutMs, undefined, () => {
      const head = spawnSync("git", ["-C", remote, "rev-parse", "--verify", "--quiet", "HEAD"], {
        encoding: "utf8",
        env: this.env as NodeJS.ProcessEnv,
      });
      const sha = head.status === 0 ? head.stdout.trim() : "";
      if (sha)
        this.world.record("note", { fetched: { machine: this.machineOf(target), remoteCwd, sha } });
    });
    return r;
  }

  /**
   * Makes remoteRepo hold rev. Idempotent: a repo that already holds it is
   * left as it is, and only a push that moved objects counts as an effect.
   */
  async push(
    target: unknown,
    localRepo: string,
    remoteRepo: string,
    rev: string,
    timeoutMs: number,
  ): Promise<RunResult> {
    const remote = q(this.at(target, remoteRepo));
    // A repository the push created has an unborn HEAD; pointing it at the
    // pushed commit lets a later fetch of HEAD, or a worktree, use it. A HEAD
    // that already names a commit is the host's own and is left alone.
    const headToRev = `git -C ${remote} rev-parse -q --verify HEAD >/dev/null || git -C ${remote} update-ref HEAD ${q(rev)}`;
    // One push at a time in the world, as a plugin must keep two pushes of
    // one repository from racing on its creation, its refs and its HEAD.
    const lock = q(join(this.world.dir, "push.lock"));
    const script = [
      `if command -v flock >/dev/null; then exec 9>${lock} && flock 9; fi`,
      `git -C ${remote} rev-parse --git-dir >/dev/null 2>&1 || git init --quiet ${remote} || exit 1`,
      `if git -C ${remote} cat-file -e ${q(`${rev}^{commit}`)} 2>/dev/null; then ${headToRev}; echo holds; exit 0; fi`,
      `git -C ${q(localRepo)} push --quiet ${remote} ${q(`${rev}:refs/mu/seed/${rev}`)} || exit 1`,
      `${headToRev}`,
      "echo pushed",
    ].join("\n");
    const r = await this.run(target, script, this.loginDir(target), timeoutMs);
    if (r.exitCode === 0 && r.stdout.trim() === "pushed") {
      this.world.update((s) => {
        s.effects[`link.push:${rev}`] = (s.effects[`link.push:${rev}`] ?? 0) + 1;
      });
    }
    return r;
  }

  private async run(
    target: unknown,
    script: string,
    cwd: string,
    timeoutMs: number,
    leak?: string,
    /** Runs once the script has ended, before the switch point that lets another go on. */
    after: (r: RunResult) => void = () => {},
  ): Promise<RunResult> {
    const machine = this.machineOf(target);
    // Two switch points in the virtual engine: between them the script runs
    // alone, and another mu's script (a fetch into the same checkout) may
    // run after this one ended and before its answer goes back.
    await this.turn("start");
    this.world.update((s) => {
      const n = s.sessions?.[machine] ?? { active: 0, peak: 0 };
      n.active += 1;
      n.peak = Math.max(n.peak, n.active);
      s.sessions = { ...s.sessions, [machine]: n };
    });
    let r: RunResult;
    try {
      r = await runScript(script, cwd, timeoutMs, this.env, leak);
      if (r.exitCode === 0) after(r);
    } catch (err) {
      this.free(machine);
      throw err;
    }
    if (r.exitCode === null) this.afterTimeout(() => this.free(machine));
    else this.free(machine);
    await this.turn("end");
    return r;
  }
}

/** The scripts running now, so the end of stdin can cancel them. */
const running = new Set<number>();

/**
 * How many scripts have not yet ended, pipes and all. The process may have
 * exited while its output still drains: the virtual engine's clock must
 * stand still until the script's answer is made, not only while the child lives.
 */
export const scriptsUnderWay = (): number => running.size;

/** Ends every script still running, and all it started: its calls then answer as timed out. */
export function cancelRunning(): void {
  for (const pid of running) killTree(pid);
}

/** Reads the whole script from fd 3, closes it, and runs it in this shell. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: sh expands this, not JavaScript
const FROM_FD3 = '__mu_script=$(cat <&3; echo .); exec 3<&-; eval "${__mu_script%.}"';

function runScript(
  script: string,
  cwd: string,
  timeoutMs: number,
  env: ScriptEnv,
  leak?: string,
): Promise<RunResult> {
  return new Promise((resolve) => {
    // Stays in our process group: a plugin never detaches what it runs. The
    // script comes on a pipe, not as an argument: one argument is capped at
    // 128 KiB, exactly the maxScriptBytes declared.
    const child = spawn("/bin/sh", ["-c", FROM_FD3], {
      cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    if (child.pid !== undefined) running.add(child.pid);
    const fd3 = child.stdio[3] as NodeJS.WritableStream;
    fd3.on("error", () => {}); // a shell that died first closed it
    fd3.end(script);
    // Bytes, decoded once at the end: a character split across two reads
    // must not turn into two replacement characters.
    const bytes = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const kept = { stdout: Buffer.byteLength(leak ?? ""), stderr: 0 };
    let partial = false;
    const take = (which: "stdout" | "stderr") => (b: Buffer) => {
      const room = OUTPUT_MAX - kept[which];
      if (b.length > room) partial = true;
      if (room > 0) {
        bytes[which].push(b.subarray(0, room));
        kept[which] += Math.min(room, b.length);
      }
    };
    child.stdout?.on("data", take("stdout"));
    child.stderr?.on("data", take("stderr"));
    let done = false;
    const finish = (exitCode: number | null) => {
      if (done) return;
      done = true;
      if (child.pid !== undefined) running.delete(child.pid);
      const text = (which: "stdout" | "stderr") => Buffer.concat(bytes[which]).toString("utf8");
      resolve({ exitCode, stdout: (leak ?? "") + text("stdout"), stderr: text("stderr"), partial });
    };
    // remoteOnTimeout "stopped": everything the script started is gone before
    // the answer, so kill the whole tree, then answer.
    const timer = setTimeout(() => {
      killTree(child.pid as number);
      finish(null);
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      finish(signal ? null : code);
    });
  });
}
