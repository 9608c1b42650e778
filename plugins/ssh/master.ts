import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";

// The ssh ControlMaster process, whether the plugin spawned it or its
// launcher (bin/mu-plugin-ssh) did before Node started. The launcher's
// master is this process's child too (the launcher exec'd Node), but not a
// ChildProcess Node knows: it is read through /proc.

export interface Master {
  alive(): boolean;
  kill(): void;
  /** Resolves when it exits, where that can be heard; otherwise never (alive() tells). */
  exited: Promise<void>;
  stderr(): string;
}

const ERR_CAP = 8192;

export function spawnMaster(args: string[]): Master {
  const m = spawn("ssh", args, { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  m.stderr?.on("data", (b: Buffer) => {
    if (err.length < ERR_CAP) err += b.toString("utf8");
  });
  const exited = new Promise<void>((r) => m.on("exit", () => r()));
  return {
    // A master a signal ended has a null exitCode too.
    alive: () => m.exitCode === null && m.signalCode === null,
    kill: () => {
      m.kill("SIGKILL");
    },
    exited,
    stderr: () => err,
  };
}

/** Whether pid runs, is no zombie, and is this process's child (so not a reused pid). */
function ownChildAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[0] !== "Z" && Number(rest[1]) === process.pid;
  } catch {
    return false;
  }
}

function launched(pid: number, dir: string): Master {
  return {
    alive: () => ownChildAlive(pid),
    kill: () => {
      if (!ownChildAlive(pid)) return;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    },
    exited: new Promise<void>(() => {}),
    stderr: () => {
      try {
        return readFileSync(join(dir, "err"), "utf8").slice(0, ERR_CAP);
      } catch {
        return "";
      }
    },
  };
}

/**
 * The master the launcher started, with its socket directory, if it was
 * started with exactly `argsFor(dir)`; one started otherwise is ended and
 * its directory removed, so the plugin starts its own. The launcher's note
 * is taken out of the environment either way: no session inherits it.
 */
export function adoptLaunched(
  argsFor: (dir: string) => string[],
): { master: Master; dir: string } | undefined {
  const note = process.env.MU_SSH_EARLY;
  delete process.env.MU_SSH_EARLY;
  if (!note) return undefined;
  const at = note.indexOf(" ");
  const pid = Number(note.slice(0, at));
  const dir = note.slice(at + 1);
  if (!Number.isInteger(pid) || pid <= 0 || !basename(dir).startsWith(`mu-ssh-${process.pid}-`))
    return undefined;
  const master = launched(pid, dir);
  let wrote = "";
  try {
    wrote = readFileSync(join(dir, "argv"), "utf8");
  } catch {
    // no record: not adopted
  }
  if (wrote === `${argsFor(dir).join("\n")}\n` && master.alive()) return { master, dir };
  master.kill();
  rmSync(dir, { recursive: true, force: true });
  return undefined;
}
