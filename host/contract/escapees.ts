import { type LiveProcess, liveProcesses } from "../ports/proc-scan.js";

// Two ways to find what a plugin started outside its group. A marker
// variable set only for one plugin process is inherited by every descendant,
// wherever it moved to, unless it blanked its environment. Ancestry finds
// those: the plugin runs as a child subreaper (see subreaper.ts), so an
// orphan stays its descendant while it runs; and a descendant seen once is
// remembered, so it is still known after the stop ends the plugin.

export interface Escapee {
  pid: number;
  pgid: number;
  sid: number;
  cmdline: string;
  /** How it was found: "marker", "ancestry" or both. */
  by: string;
}

export interface Watch {
  /** The marker variable and this start's value of it. */
  name: string;
  value: string;
  /** The plugin's process, the root of its ancestry (and its group's id). */
  leader?: number;
  /** Descendants seen so far, pid to start time. */
  known: Map<number, number>;
  /**
   * An environment entry (NAME=value) that link.timeout's own script gives
   * the session it makes on purpose: those processes are the script's doing,
   * not the plugin's, and are left alone. An entry, not a session leader,
   * since the leader may be killed while a child it just forked lives on.
   */
  spare?: string;
}

function escapee(p: LiveProcess, by: string[]): Escapee {
  return { pid: p.pid, pgid: p.pgid, sid: p.sid, cmdline: p.cmdline(), by: by.join(" and ") };
}

/** Live processes outside the leader's group that carry the marker or descend from the leader. */
export function outside(w: Watch): Escapee[] {
  const all = [...liveProcesses()];
  const parent = new Map(all.map((p) => [p.pid, p.ppid]));
  const descends = (pid: number) => {
    for (let at = parent.get(pid), hops = 0; at !== undefined && hops < 4096; hops++) {
      if (at === w.leader) return true;
      at = parent.get(at);
    }
    return false;
  };
  const entry = `${w.name}=${w.value}`;
  const found: Escapee[] = [];
  for (const p of all) {
    if (p.pid === process.pid || p.pid === w.leader) continue;
    const kin = w.leader !== undefined && descends(p.pid);
    if (kin) w.known.set(p.pid, p.startTime);
    if (p.pgid === w.leader) continue;
    const env = p.environ().split("\0");
    if (w.spare !== undefined && env.includes(w.spare)) continue;
    const by: string[] = [];
    if (env.includes(entry)) by.push("marker");
    if (kin || w.known.get(p.pid) === p.startTime) by.push("ancestry");
    // A process killed a moment ago has no memory left, so no command line:
    // it is on its way out, not away (link.timeout's own session meets this).
    if (by.length > 0 && p.cmdline() !== "") found.push(escapee(p, by));
  }
  return found;
}

/** Processes left in a group, for evidence. */
export function members(pgid: number): Escapee[] {
  const found: Escapee[] = [];
  for (const p of liveProcesses()) if (p.pgid === pgid) found.push(escapee(p, ["group"]));
  return found;
}

/**
 * Finds and SIGKILLs escapees until none is left (one may fork while we
 * look). Killing them is the suite's duty: nothing else would, since mu
 * stops only the plugin's own group.
 */
export function sweep(w: Watch): Escapee[] {
  const all: Escapee[] = [];
  for (let pass = 0; pass < 5; pass++) {
    const found = outside(w).filter((e) => !all.some((a) => a.pid === e.pid));
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
