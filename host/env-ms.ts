import { UsageError } from "./errors.js";

// Every number a person types (a flag, an environment variable) has a unit
// and a range, checked before anything runs. The ceilings are far below
// what a timer can hold (2^31-1 ms), so no wait ever overflows into firing
// at once.

/** The longest wait mu accepts for any one timeout: one day. */
export const MAX_MS = 86_400_000;

/**
 * A margin is subtracted from a date, never handed to a timer, so it may be
 * long: up to about 300 years, which covers any deadline a provider names.
 */
export const MAX_MARGIN_MS = 10_000_000_000_000;

export interface Bound {
  /** How the value is named in the message: `--timeout` or `MU_SLOT_WAIT_MS`. */
  name: string;
  unit: string;
  min: number;
  max: number;
  /** Whole numbers only (milliseconds, counts); seconds may be fractional. */
  whole: boolean;
  example: number;
  code: string;
}

/** The number in `raw`, or a one-line usage error saying the unit and the range. */
export function bounded(raw: string, b: Bound): number {
  const n = raw.trim() === "" ? Number.NaN : Number(raw);
  const ok = Number.isFinite(n) && (!b.whole || Number.isInteger(n)) && n >= b.min && n <= b.max;
  if (!ok) {
    const kind = b.whole ? "a whole number" : "a number";
    // A flag reads as typed on the command line, a variable as in the shell.
    const sep = b.name.startsWith("-") ? " " : "=";
    const shown = JSON.stringify(raw).slice(1, -1);
    throw new UsageError(b.code, "usage", `${b.name}${sep}'${shown}' is not valid`, {
      hint: `give ${kind} of ${b.unit} from ${b.min} to ${b.max}, e.g. ${b.name}${sep}${b.example}`,
    });
  }
  return n;
}

/** mu's tunable waits and margins, from the environment in milliseconds. */
export function envMs(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
  max = MAX_MS,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  return bounded(raw, {
    name,
    unit: "milliseconds",
    min: 0,
    max,
    whole: true,
    example: fallback,
    code: "env.ms",
  });
}
