import { agentRef } from "../names.js";
import type { Io } from "./io.js";

// What every verb group's definitions share: how an action runs, and the
// small argument helpers.

export type Verb = (io: Io) => Promise<unknown>;

/** Runs a verb's body under the program's error handling; its exit code is kept. */
export type Run = (verb: Verb) => Promise<void>;

/** A repeatable option's values, in the order given. */
export const collect = (v: string, acc: string[] = []) => [...acc, v];

/** The verb's name and options once a `<workstream>/<name>` is split. */
export function named<O extends { workstream?: string }>(
  typed: string,
  opts: O,
): { name: string; opts: O } {
  const r = agentRef(typed, opts.workstream);
  return { name: r.name, opts: { ...opts, workstream: r.workstream } };
}
