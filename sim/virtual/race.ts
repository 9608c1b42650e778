import type { CrashPointName } from "../../host/crash-point.js";
import type { Fault } from "../plugin/fault-types.js";

// One race of the concurrent family (concurrent-workload.ts, later-races.ts).

export interface Race {
  name: string;
  /** What must be there before the race: run one at a time, never killed. */
  setup: string[];
  /** The verbs that race. */
  verbs: [string, string];
  /** The calls the first verb makes that the plugin may hold for a while. */
  calls: string[];
  /** A verb that may run beside them, reading what they change. */
  aside: string[];
  /** A machine of the set-up the provider then reports gone: its record is lost, holding nothing. */
  lost?: string;
  /**
   * Verbs of the set-up killed half-way, each at one of its crash points
   * (drawn) or by a fault the plugin meets, leaving their work for the
   * racing verbs; the faults are gone once they ran.
   */
  cut?: { verb: string; at?: CrashPointName[]; faults?: Fault[] }[];
  /** Verbs run one at a time once the cut ones ran, before the race: what a crew looks at first. */
  alone?: string[];
  /** What the racing verbs' environment adds. */
  env?: Record<string, string>;
  /** The second verb starts only once the plugin saw this method (the first verb then always goes first). */
  after?: string;
  /** Faults that stand through the race, beside the drawn ones; the settle clears them. */
  faults?: Fault[];
}
