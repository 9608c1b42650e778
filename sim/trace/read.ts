// Reading the traces mu writes with MU_TRACE_DIR (host/trace/): one file per
// mu invocation, one record per line. The replaying sim and the
// scenario-from-trace tool both read them through here.

export interface TraceRecord {
  t: number;
  ev: string;
  p?: number;
  msg?: Record<string, unknown>;
  bad?: string;
  raw?: string;
  [k: string]: unknown;
}

/** One plugin process as mu saw it: what went each way, and how it ended. */
export interface PluginSession {
  argv: string[];
  /** When mu started it, on the trace's clock. */
  at?: number;
  events: TraceRecord[];
  /** True when mu's invocation ended with no record of how (killed from outside). */
  muKilled?: boolean;
}

export interface Invocation {
  at: number;
  argv: string[];
  env: Record<string, string>;
  content: boolean;
  sessions: PluginSession[];
  crash?: string | null;
  end?: { exit: number } | { signal: string };
  state?: { intents: { method: string; subject: string }[]; hosts: Record<string, string> };
}

export class TraceFormatError extends Error {}

export function parseTrace(text: string, name = "trace"): Invocation {
  const recs: TraceRecord[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      recs.push(JSON.parse(line) as TraceRecord);
    } catch {
      // The last line of a trace cut by SIGKILL may be partial.
      if (i < text.split("\n").length - 2)
        throw new TraceFormatError(`${name}: line ${i + 1} is not JSON`);
    }
  }
  const head = recs[0];
  if (head?.ev !== "mu")
    throw new TraceFormatError(`${name}: not a mu trace (no 'mu' record first)`);
  const inv: Invocation = {
    at: Number(head.at ?? 0),
    argv: (head.argv as string[]) ?? [],
    env: (head.env as Record<string, string>) ?? {},
    content: head.content === true,
    sessions: [],
  };
  const byP = new Map<number, PluginSession>();
  for (const r of recs.slice(1)) {
    if (r.ev === "spawn" && r.p !== undefined) {
      const s: PluginSession = { argv: (r.argv as string[]) ?? [], at: r.t, events: [] };
      byP.set(r.p, s);
      inv.sessions.push(s);
    } else if (r.p !== undefined) byP.get(r.p)?.events.push(r);
    else if (r.ev === "crash") inv.crash = (r.point as string | null) ?? null;
    else if (r.ev === "end")
      inv.end = "signal" in r ? { signal: String(r.signal) } : { exit: Number(r.exit) };
    else if (r.ev === "state") inv.state = r as unknown as Invocation["state"];
  }
  if (inv.end === undefined && inv.crash === undefined)
    for (const s of inv.sessions) if (!s.events.some((e) => e.ev === "exit")) s.muKilled = true;
  return inv;
}

/** True for mu's own steps to stop a plugin: shutdown, closing stdin, a group kill. */
function stopsIt(e: TraceRecord): boolean {
  return (
    e.ev === "stdin-closed" || e.ev === "kill" || (e.ev === "out" && e.msg?.method === "shutdown")
  );
}

/**
 * When the plugin ended by itself (its stdout closed or it exited before mu
 * began to stop it), or undefined when mu stopped it.
 */
export function ownEndAt(s: PluginSession): number | undefined {
  for (const e of s.events) {
    if (stopsIt(e)) return undefined;
    if (e.ev === "stdout-end" || e.ev === "exit") return e.t;
  }
  return undefined;
}
