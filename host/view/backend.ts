// What a mux backend is, apart from how one is chosen (mux.ts): the ports
// and the backends import this, and mux.ts imports them.

export interface Pane {
  /** The backend's name for the pane; what mu records on the agent's row. */
  id: string;
  pid: number;
}

export interface ViewCommand {
  command: string;
  env: Record<string, string>;
  cwd?: string;
}

export interface Mux {
  name: string;
  /** False for a backend that can only open a shell (as herdr): mu refuses such views up front. */
  runsCommandLines: boolean;
  open(workstream: string, agent: string, view: ViewCommand): Promise<Pane>;
  /** True while the pane's process runs. */
  alive(paneId: string): Promise<boolean>;
  /** Ends the pane and what runs in it; a pane already gone is not an error. */
  kill(paneId: string): Promise<void>;
  /** Every pane the backend holds for this agent, recorded by mu or not. */
  panesOf(workstream: string, agent: string): Promise<string[]>;
}

/** A backend failure as mu's one line. */
export class PaneError extends Error {}
