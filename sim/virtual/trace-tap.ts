import type { Ports } from "../../host/ports/types.js";
import { Trace } from "../../host/trace/recorder.js";
import { Redactor } from "../../host/trace/redact.js";

// A mu step whose environment asks for a trace (MU_TRACE_DIR) is traced as
// the mu executable would trace it, through the same recorder and redactor,
// but into memory: the virtual engine has no real directory for it, and the
// explorer only reads the lines (trace-check.ts).

export function tapTrace(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  ports: Ports,
  lines: string[],
): Ports {
  if (!env.MU_TRACE_DIR) return ports;
  let t = 0;
  const sink = {
    path: "memory",
    now: () => t++,
    write: (record: Record<string, unknown>) => {
      lines.push(JSON.stringify(record));
    },
  };
  const trace = new Trace(sink, new Redactor(env, env.MU_TRACE_CONTENT === "1"));
  trace.begin(argv, env);
  return trace.ports(ports);
}
