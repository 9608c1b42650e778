import type { Ports } from "../../host/ports/types.js";
import { Trace } from "../../host/trace/recorder.js";
import { Redactor } from "../../host/trace/redact.js";
import { recordState } from "../../host/trace/start.js";

// A mu step whose environment asks for a trace (MU_TRACE_DIR) is traced as
// the mu executable would trace it, through the same recorder and redactor,
// but into memory: the virtual engine has no real directory for it. Scenario
// files read the lines through an expect step's `trace`, the explorer
// through its leak check (trace-check.ts).

export interface Tapped {
  ports: Ports;
  /** What the executable records once its verb returned: the state, then the exit. */
  finish(exit: number): Promise<void>;
}

export function tapTrace(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  ports: Ports,
  lines: string[],
): Tapped {
  if (!env.MU_TRACE_DIR) return { ports, finish: async () => {} };
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
  const tapped = trace.ports(ports);
  return {
    ports: tapped,
    finish: async (exit) => {
      await recordState(trace, tapped);
      trace.end({ exit });
    },
  };
}
