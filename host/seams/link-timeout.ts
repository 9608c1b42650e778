import type { Io } from "../cli/io.js";
import { bounded, MAX_MS } from "../env-ms.js";
import { UsageError } from "../errors.js";
import { DEFAULT_LINK_TIMEOUT_MS } from "./link.js";

/** The option that sets a link verb's time limit, for the hints of the verbs that have it. */
export const TIMEOUT_FLAG = "--timeout-ms";

/** A link verb's time limit as typed: --timeout-ms, or --timeout, its old spelling. */
export interface LinkTimeout {
  timeoutMs?: string;
  timeout?: string;
}

/**
 * Parses a link verb's time limit in milliseconds. `mu wait --timeout` is
 * seconds, so here the flag carries its unit in its name; the old spelling
 * still works, with a line saying how it was read and how to write it.
 */
export function timeoutOption(opts: LinkTimeout, verb: string, io: Pick<Io, "err">): number {
  if (opts.timeout !== undefined && opts.timeoutMs !== undefined) {
    throw new UsageError(`host.${verb}.timeout`, "usage", "--timeout and --timeout-ms both given", {
      hint: "give --timeout-ms alone (milliseconds)",
    });
  }
  const raw = opts.timeoutMs ?? opts.timeout;
  if (raw === undefined) return DEFAULT_LINK_TIMEOUT_MS;
  const ms = bounded(raw, {
    name: opts.timeoutMs !== undefined ? "--timeout-ms" : "--timeout",
    unit: "milliseconds",
    min: 1,
    max: MAX_MS,
    whole: true,
    example: DEFAULT_LINK_TIMEOUT_MS,
    code: `host.${verb}.timeout`,
  });
  if (opts.timeout !== undefined)
    io.err(
      `mu: host: read --timeout ${raw} as ${ms} ms; on host ${verb} write --timeout-ms ${raw} (a plain --timeout is seconds elsewhere, as on mu wait)\n`,
    );
  return ms;
}
