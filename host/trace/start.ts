import { allIntents } from "../effects/journal.js";
import { listHosts } from "../hosts/records.js";
import { terminator } from "../plugin/terminator.js";
import type { Ports } from "../ports/types.js";
import { dbPath, openStore } from "../store/index.js";
import { Trace } from "./recorder.js";
import { Redactor } from "./redact.js";
import { openTraceFile } from "./trace-file.js";

// MU_TRACE_DIR turns tracing on for one invocation of the mu executable.
// A trace that cannot be written never changes what mu does: mu says so
// once on stderr and runs untraced.

export function startTrace(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  warn: (line: string) => void,
): Trace | null {
  const dir = env.MU_TRACE_DIR;
  if (!dir) return null;
  let trace: Trace;
  try {
    trace = new Trace(openTraceFile(dir), new Redactor(env, env.MU_TRACE_CONTENT === "1"));
  } catch (err) {
    const code = (err as { code?: unknown }).code ?? "error";
    warn(
      `mu: trace: cannot write a trace in ${dir} (${String(code)}); running untraced: make its parent directory, or unset MU_TRACE_DIR\n`,
    );
    return null;
  }
  trace.begin(argv, env);
  terminator.onRaise = (signal) => trace.end({ signal });
  process.on("exit", (code) => trace.end({ exit: code }));
  return trace;
}

/** What mu's database holds once the verb is done: the scenario's expect block. */
export async function recordState(trace: Trace, ports: Ports): Promise<void> {
  try {
    if ((await ports.fs.stat(dbPath(ports.env))) === null) return;
    const state = await openStore(ports).read((db) => ({
      intents: allIntents(db).map((i) => ({
        method: i.method,
        subject: trace.redact.mask(i.subject),
      })),
      hosts: Object.fromEntries(listHosts(db).map((h) => [h.name, h.state])),
    }));
    trace.record("state", state);
  } catch {
    // A database that does not read is the verb's business, already reported.
  }
}
