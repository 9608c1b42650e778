import { liveProcesses } from "../ports/proc-scan.js";

// A plugin's descendants inherit its environment, so a marker variable set
// only for one plugin process finds every process it started, wherever that
// process moved to. One found outside the plugin's group escaped it.

export interface Escapee {
  pid: number;
  pgid: number;
  cmdline: string;
}

/** Live processes whose environment holds name=value, outside group `pgid` when given. */
export function marked(name: string, value: string, pgid?: number): Escapee[] {
  const entry = `${name}=${value}`;
  const found: Escapee[] = [];
  for (const p of liveProcesses()) {
    if (p.pid === process.pid || p.pgid === pgid) continue;
    if (!p.environ().split("\0").includes(entry)) continue;
    found.push({ pid: p.pid, pgid: p.pgid, cmdline: p.cmdline() });
  }
  return found;
}

/** Processes left in a group, for evidence. */
export function members(pgid: number): Escapee[] {
  const found: Escapee[] = [];
  for (const p of liveProcesses())
    if (p.pgid === pgid) found.push({ pid: p.pid, pgid: p.pgid, cmdline: p.cmdline() });
  return found;
}

/**
 * Finds and SIGKILLs escapees until none is left (one may fork while we
 * look). Killing them is the suite's duty: nothing else would, since mu
 * stops only the plugin's own group.
 */
export function sweep(name: string, value: string, pgid?: number): Escapee[] {
  const all: Escapee[] = [];
  for (let pass = 0; pass < 5; pass++) {
    const found = marked(name, value, pgid).filter((e) => !all.some((a) => a.pid === e.pid));
    if (found.length === 0) break;
    for (const e of found) {
      try {
        process.kill(e.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    all.push(...found);
  }
  return all;
}
