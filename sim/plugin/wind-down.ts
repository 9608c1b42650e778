import type { SimIo } from "./sim-io.js";
import type { World } from "./world.js";

// How a sim process ends once told to stop (shutdown, or its stdin's end):
// at once, or slowly as a plugin that cancels its work and flushes its state
// first. Only a process that got to its own exit counts itself as a clean
// exit, so a scenario can tell a plugin given its grace from one killed
// inside it. The group's helpers (groupHelper) are the other half of what
// mu's stop sequence meets.

export class WindDown {
  /** How long the process takes to exit once told to stop (slowExitMs). */
  slowMs = 0;
  private started = false;

  constructor(
    private readonly world: World,
    private readonly io: SimIo,
  ) {}

  /** Told to stop: exit now, or slowMs from now; a second telling changes nothing. */
  begin(): void {
    if (this.started) return;
    this.started = true;
    const done = () => {
      this.world.update((s) => {
        s.cleanExits = (s.cleanExits ?? 0) + 1;
      });
      this.io.exit(0);
    };
    if (this.slowMs > 0) this.io.setTimer(this.slowMs, done);
    else done();
  }

  /** A helper in this process's own group that only a group kill ends. */
  helper(how: true | { lingerMs: number }): void {
    const pid = this.io.startHelper(how === true ? undefined : how.lingerMs);
    this.world.record("note", { groupHelper: pid });
  }
}
