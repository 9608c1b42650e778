import type { Registration, Supervisor } from "./plugin/supervisor.js";
import type { Ports } from "./ports/types.js";
import { TESTBED_BUILD } from "./testbed-plant.js";

// The testbed's pause points: places between two of mu's own steps, with no
// plugin call between them, where another mu may run. A hold on a plugin
// call cannot stage a race there, so with MU_TESTBED_PAUSE naming the point
// mu asks its plugin `testbed.pause` and goes on once that is answered: the
// sim counts the call (a step's `afterSeen` waits on it) and a `hold` fault
// keeps it until a world step releases it. Only the testbed's build has
// them; every call site is written `if (TESTBED_BUILD) await pauseAt(...)`
// so the shipped bundle drops it with the point's name, as it drops the
// planted bugs (host/testbed-plant.ts).

/** Every pause point, each with where it stands (docs/testbed.md's table lists the same). */
export const PAUSE_POINTS = {
  /** `agent forget` (with or without --abandon) has committed; the name's panes are not yet killed. */
  "forget.committed": true,
  /** A spawn's job.start answer is recorded (the job runs); the spawn has not read the record back. */
  "spawn.started": true,
  /** A close's job.stop answer is recorded (the job stopped, owing its collect); the close has not begun the collect. */
  "close.stopped": true,
  /** A verb has read a tree a close of the name left; it has not yet claimed it for its removal. */
  "trees.read": true,
} as const;

export type PausePointName = keyof typeof PAUSE_POINTS;

/** The method a pause asks; the sim takes it as mu's, in no seam. */
export const PAUSE_METHOD = "testbed.pause";

/** How long a pause waits at most: a sim's hold lets go after a minute. */
const PAUSE_MS = 90_000;

export async function pauseAt(
  point: PausePointName,
  ports: Ports,
  sup: Supervisor,
  reg: Registration,
): Promise<void> {
  if (!TESTBED_BUILD || ports.env.MU_TESTBED_PAUSE !== point) return;
  try {
    await sup.call(reg, PAUSE_METHOD, { point }, { timeoutMs: PAUSE_MS });
  } catch {
    // A plugin that does not know the method answers an error: the pause is over.
  }
}
