import type { Io } from "../../cli/io.js";
import type { LinkHost } from "../../hosts/link-host.js";
import type { JobRecord } from "../../jobs/records.js";
import type { Supervisor } from "../../plugin/supervisor.js";
import type { JobSeam } from "../../protocol/declaration.js";
import type { Store } from "../../store/index.js";
import type { Mux } from "../../view/mux.js";

// What every step of a spawn works with. The collaborators travel as one
// value so a step's signature says what it needs beyond them.

export interface SpawnOptions {
  host: string;
  workstream?: string;
  worktree?: boolean;
  from?: string;
  task?: string;
  send?: string;
  command?: string;
  role?: string;
  harness?: string;
}

/** The verb's collaborators: the process's io, the DB, the plugins, the host, the views. */
export interface SpawnCtx {
  io: Io;
  store: Store;
  sup: Supervisor;
  /** The host the agent goes on, as the verb found it. */
  h: LinkHost;
  mux: Mux;
}

/** The spawn as asked, once its arguments passed. */
export interface SpawnRequest {
  name: string;
  ws: string;
  role: string;
  opts: SpawnOptions;
  /** The command that picks the spawn up again. */
  next: string;
}

/** What the start will send, fixed before the record is written. */
export interface StartPlan {
  job: JobSeam;
  atStart: boolean;
  key: string;
  msgId: string;
  spec: Record<string, unknown>;
  /** The plugin instance the start goes to. */
  instance: string;
}

/** The record step's outcome: the job, and the incarnation its start is sent with. */
export interface Recorded {
  j: JobRecord;
  incarnation: number;
}

/** The first prompt a spawn gives: --send's text, or a --task's brief. */
export function firstPrompt(opts: Pick<SpawnOptions, "send" | "task">): string | undefined {
  return opts.send ?? (opts.task !== undefined ? `Work on task ${opts.task}.` : undefined);
}
