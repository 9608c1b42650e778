// TypeScript shapes of a plugin's handshake answer. The JSON Schema is the
// authority; these types describe a value that already passed it.

export interface KeyCaps {
  lookup: boolean;
  fenceKey: boolean;
  dedupe?: { exact: true; windowMs: number };
  inFlightMs?: number;
}

export interface LinkSeam {
  fetch: boolean;
  push?: boolean;
  slots: "mu" | "self";
  remoteOnTimeout: "stopped" | "stopping" | "unknown";
  quiescence: "provable" | "unprovable";
  maxScriptBytes: number;
  checks: string[];
}

export interface JobSeam {
  kind: string;
  view: "bound" | "detached";
  handle: "pane" | "file" | "reply";
  start: KeyCaps;
  channel?: string;
  checks: string[];
  firstTurn?: "on-send" | "at-start";
  outlivesHost?: boolean;
  honours?: { command?: boolean; env?: boolean; sockets?: boolean; roles?: string[] };
}

export interface HostSeam {
  acquire: KeyCaps;
}

export interface ChannelSeam {
  name: string;
  caps: Record<string, unknown> & {
    fence?: string;
    watch?: string;
    settleText?: string;
  };
}

export interface Seams {
  link?: LinkSeam;
  job?: JobSeam;
  host?: HostSeam;
  channel?: ChannelSeam;
}

export type SeamName = keyof Seams;

export interface InitializeResult {
  protocol: number;
  plugin: { name: string; version: string };
  instance: string;
  schema: string;
  seams: Seams;
}

export const PROTOCOL = { min: 1, max: 1 } as const;
