import type { Fault } from "../plugin/fault-types.js";
import type { WorldConfig } from "../plugin/world.js";
import type { Step } from "../runner/scenario.js";
import { rng } from "./rng.js";
import { weighted } from "./workload-script.js";

// The plugin's process group as a nemesis: now and then every plugin process
// of a workload winds down slowly once told to stop (inside mu's 5 s grace,
// or past it, so mu must kill it), or leaves a helper in its group that
// ignores shutdown and outlives the leader unless mu kills the group. It is
// drawn from a stream of its own, so a seed's verbs and faults stay the ones
// it drew before, and it lasts until the workload clears its faults; the
// liveness checks after run on a well-behaved plugin.

/** Longer than the grace, and than the grace twice: only mu's kill ends it in time. */
const PAST_GRACE_MS = 12_000;

function draw(seed: number): Fault[] {
  const r = rng((seed ^ 0x2f6b9e35) >>> 0);
  const always = (act: Fault["do"]): Fault[] => [{ on: "initialize", times: "always", do: act }];
  return weighted<() => Fault[]>(r, [
    [13, () => []],
    [3, () => always({ slowExitMs: r() < 0.5 ? 800 : 4_000 })],
    [2, () => always({ slowExitMs: PAST_GRACE_MS })],
    [2, () => always({ groupHelper: { lingerMs: PAST_GRACE_MS } })],
  ])();
}

/**
 * Adds the seed's nemesis, if it draws one, to the world and to every fault
 * list the steps set before the clearing; the clearing waits for what a
 * killed mu left running to end by itself.
 */
export function withGroupNemesis(seed: number, world: Partial<WorldConfig>, steps: Step[]): void {
  const nemesis = draw(seed);
  if (nemesis.length === 0) return;
  world.faults = [...nemesis, ...(world.faults ?? [])];
  for (const st of steps) {
    if (!("world" in st) || st.world.faults === undefined) continue;
    if (st.world.faults.length === 0)
      st.elapseMs = Math.max(st.elapseMs ?? 0, PAST_GRACE_MS + 3_000);
    else st.world.faults = [...nemesis, ...st.world.faults];
  }
}
