import { readdirSync, readFileSync } from "node:fs";

// One pass over /proc, for the few places that must find processes by what
// they are rather than by pid: group membership, and the testbed's search for
// anything a run left behind. Zombies are skipped: they run nothing.

export interface LiveProcess {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Clock ticks after boot: with the pid, names one process even after pid reuse. */
  startTime: number;
  /** Read lazily: most callers need only the pgid. */
  cmdline(): string;
  environ(): string;
}

export function* liveProcesses(): Generator<LiveProcess> {
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // ended while we looked
    }
    // The command name (field 2) may hold spaces and parentheses.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (rest[0] === "Z") continue;
    const read = (f: string) => {
      try {
        return readFileSync(`/proc/${pid}/${f}`, "utf8");
      } catch {
        return "";
      }
    };
    yield {
      pid,
      ppid: Number(rest[1]),
      pgid: Number(rest[2]),
      sid: Number(rest[3]),
      startTime: Number(rest[19]),
      cmdline: () => read("cmdline").replace(/\0/g, " ").trim(),
      environ: () => read("environ"),
    };
  }
}
