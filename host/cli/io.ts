import type { Ports } from "../ports/types.js";

/** What a verb may touch: the ports and two output streams. */
export interface Io {
  ports: Ports;
  out(text: string): void;
  err(text: string): void;
}

/** Prints a value as one JSON document, the shape every `--json` read shares. */
export function printJson(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
