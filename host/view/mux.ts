import { envMs, MS_VARIABLES } from "../env-ms.js";
import { UsageError } from "../errors.js";
import type { Ports } from "../ports/types.js";
import type { Mux } from "./backend.js";
import { simMux } from "./sim-mux.js";
import { tmuxMux } from "./tmux-mux.js";

// Where an agent's view runs: a pane of a terminal multiplexer, running the
// command a job's start (or attach) returned, with stdin from /dev/null.
// `MU_MUX` picks the backend: tmux (the default), or sim, the testbed's.

export { type Mux, type Pane, PaneError, type ViewCommand } from "./backend.js";

export function muxFor(ports: Ports): Mux {
  const name = ports.env.MU_MUX || "tmux";
  const standIn = ports.muxes?.[name];
  if (standIn) return standIn(ports);
  // Any other word was refused before the verb ran (env-check.ts).
  return name === "sim" ? simMux(ports) : tmuxMux(ports);
}

/** Refuses, before any call, a view on a backend that can only open a shell. */
export function requireCommandLines(mux: Mux, code: string): void {
  if (!mux.runsCommandLines) {
    throw new UsageError(
      code,
      "agent",
      `the ${mux.name} mux backend cannot run a view's command line`,
      {
        hint: "use a backend that can (MU_MUX=tmux)",
      },
    );
  }
}

/** How long a new view must live before mu counts it started (MU_VIEW_READY_MS). */
export const DEFAULT_VIEW_READY_MS = MS_VARIABLES.MU_VIEW_READY_MS.fallback;

export function viewReadyMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_VIEW_READY_MS");
}

/**
 * Whether the pane still lives once the readiness window, counted from
 * `openedAt`, has passed. A backend reports a pane before its command has
 * had a chance to fail, so one look right after opening proves nothing; the
 * first dead reading ends the wait at once.
 */
export async function livesThroughWindow(
  mux: Mux,
  ports: Ports,
  paneId: string,
  openedAt: number,
): Promise<boolean> {
  const until = openedAt + viewReadyMs(ports.env);
  for (;;) {
    if (!(await mux.alive(paneId))) return false;
    const left = until - ports.clock.now();
    if (left <= 0) return true;
    await ports.clock.sleep(Math.min(50, left));
  }
}
