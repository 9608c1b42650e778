// node dist/sim/virtual/one-file-main.js < SCENARIO-JSON: one loaded
// scenario (as the runner holds it, read from stdin) on the virtual engine,
// its outcome as one JSON line on stdout. The real runner starts this for a
// file that waits out hours (`virtualOnly`), so the engine's clock loop and
// module state stay out of the runner's process.
import type { LoadedScenario } from "../runner/scenario.js";
import { runVirtual } from "./run-scenario.js";

export interface OneFileOutcome {
  failure?: string;
  exits: (number | null)[];
  /** How each mu step ended by signal, else null. */
  signals?: (string | null)[];
  /** How many messages of each method the plugin received (in) and sent (out). */
  counts?: { in: Record<string, number>; out: Record<string, number> };
  virtualMs: number;
}

let text = "";
for await (const chunk of process.stdin) text += chunk;
const r = await runVirtual(JSON.parse(text) as LoadedScenario);
const out: OneFileOutcome = r.ran
  ? {
      ...(r.failure ? { failure: r.failure } : {}),
      exits: r.exits,
      signals: r.signals,
      counts: r.transcript,
      virtualMs: r.virtualMs,
    }
  : { failure: `the virtual engine cannot run it: ${r.why}`, exits: [], virtualMs: 0 };
process.stdout.write(`${JSON.stringify(out)}\n`);
// The engine may leave handles (a fake clock's idle timers); the outcome is out.
process.exit(0);
