import type { Ports } from "../../host/ports/types.js";
import { type Mux, PaneError } from "../../host/view/mux.js";
import { DIES_AFTER_MS } from "../../host/view/sim-mux.js";
import type { WorldFs } from "../plugin/world.js";
import type { VirtualProcesses } from "./ports.js";

// The sim mux backend (MU_MUX=sim) on the virtual engine. A pane is an entry
// in the process table that runs nothing: its life is all a view needs to
// show, since a bound job watches only whether its view still lives. A view
// that names SIM_VIEW_PID_FILE gets the pane's pid written there, as the sim
// job's view command does for itself under a real shell. The panes outlive
// the mu that opened them, as a multiplexer's do; MU_MUX_SIM scripts the same
// failures as the real backend's.

export interface VirtualPane {
  pid: number;
  start: string;
  workstream: string;
  agent: string;
}

/** The panes still alive, as the real runner would find their processes left behind. */
export function livePanes(processes: VirtualProcesses, panes: Map<string, VirtualPane>): string[] {
  return [...panes]
    .filter(([, p]) => processes.alive({ pid: p.pid, start: p.start }))
    .map(([id, p]) => `${id} (${p.workstream}/${p.agent})`);
}

export function virtualMux(
  processes: VirtualProcesses,
  worldFs: WorldFs,
  panes = new Map<string, VirtualPane>(),
  /** The engine's own clock: a pane's death must not die with the mu that opened it. */
  engine?: Pick<Ports["clock"], "setTimer">,
): Record<string, (ports: Ports) => Mux> {
  let next = 1;
  const alive = (p: VirtualPane | undefined) =>
    p !== undefined && processes.alive({ pid: p.pid, start: p.start });
  const sim = (ports: Ports): Mux => {
    const mode = ports.env.MU_MUX_SIM ?? "";
    return {
      name: "sim",
      runsCommandLines: mode !== "no-command-line",
      async open(workstream, agent, view) {
        if (mode === "fail-start") throw new PaneError("the sim mux was told to fail this pane");
        const { pid, start } = processes.start();
        const id = `sim-${(next++).toString(16).padStart(8, "0")}`;
        panes.set(id, { pid, start, workstream, agent });
        const pidFile = view.env.SIM_VIEW_PID_FILE;
        if (pidFile) worldFs.writeFileSync(pidFile, String(pid));
        // As the real backend's: the pane dies a moment after it was reported.
        if (mode === "dies")
          (engine ?? ports.clock).setTimer(DIES_AFTER_MS, () => processes.end(pid));
        return { id, pid };
      },
      alive: async (id) => alive(panes.get(id)),
      async kill(id) {
        // As the real backends: a kill of no pane fails, it is never a no-op.
        if (typeof id !== "string") throw new TypeError(`the sim mux was asked to kill ${id}`);
        const p = panes.get(id);
        if (p && alive(p)) processes.end(p.pid);
        panes.delete(id);
      },
      panesOf: async (workstream, agent) =>
        [...panes]
          .filter(([, p]) => p.workstream === workstream && p.agent === agent)
          .map(([id]) => id),
    };
  };
  return { sim };
}
