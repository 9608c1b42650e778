import type { World } from "./world.js";

// A call held until the scenario lets it go: the world is a file that the
// runner (or the virtual engine) rewrites between steps, so the hold looks
// at it now and then. A writer is kept alive exactly as long as the steps
// around it need, instead of for a fixed delay long enough for a busy
// machine, which every run then sat through.

const LOOK_EVERY_MS = 50;
/** Gives up after a minute, as the setsid helper does: a scenario that forgot its release still ends. */
const AT_MOST_LOOKS = 1200;

export async function holdUntilReleased(
  world: World,
  name: string,
  setTimer: (ms: number, fn: () => void) => unknown,
): Promise<void> {
  for (let i = 0; i < AT_MOST_LOOKS; i++) {
    if (world.config().released?.includes(name)) return;
    await new Promise<void>((r) => setTimer(LOOK_EVERY_MS, r));
  }
}
