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

// Plain decimal only: JavaScript's Number() would also take hex (0x10),
// exponents (1e3), a sign and spaces, none of which a person means by a
// count of milliseconds. A leading zero is refused too (007 could be octal
// to a reader); a fraction is digits, a dot and digits.
const WHOLE = /^(0|[1-9][0-9]*)$/;
const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** The value of `raw` in plain decimal, or NaN. A minus sign only where the range goes below 0. */
export function decimal(raw: string, whole: boolean, signed = false): number {
  const negative = signed && raw.startsWith("-");
  const digits = negative ? raw.slice(1) : raw;
  if (!(whole ? WHOLE : DECIMAL).test(digits)) return Number.NaN;
  const n = Number(digits);
  return negative ? -n : n;
}

/** The number in `raw`, or a one-line usage error saying the unit and the range. */
export function bounded(raw: string, b: Bound): number {
  const n = decimal(raw, b.whole, b.min < 0);
  const ok = Number.isFinite(n) && n >= b.min && n <= b.max;
  if (!ok) {
    const kind = b.whole ? "a whole number" : "a number";
    const form = b.whole ? "in plain digits" : "in plain digits (a . before any fraction)";
    // A flag reads as typed on the command line, a variable as in the shell.
    const sep = b.name.startsWith("-") ? " " : "=";
    const shown = JSON.stringify(raw).slice(1, -1);
    throw new UsageError(b.code, "usage", `${b.name}${sep}'${shown}' is not valid`, {
      hint: `give ${kind} of ${b.unit} from ${b.min} to ${b.max}, ${form}, e.g. ${b.name}${sep}${b.example}`,
    });
  }
  return n;
}

/**
 * Every MU_*_MS variable mu reads: its default and range. One table, so a
 * verb can check them all before it starts, not only those it happens to
 * read: a typo in one must not wait for the day a verb reaches it.
 */
export const MS_VARIABLES = {
  MU_LOCK_TIMEOUT_MS: { fallback: 10_000, min: 0, max: MAX_MS },
  MU_RETAIN_AFTER_MS: { fallback: 7 * 86_400_000, min: 0, max: MAX_MARGIN_MS },
  MU_RETAIN_EVERY_MS: { fallback: 3_600_000, min: 0, max: MAX_MARGIN_MS },
  MU_SLOT_WAIT_MS: { fallback: 60_000, min: 0, max: MAX_MS },
  MU_HOST_DEADLINE_MARGIN_MS: { fallback: 10 * 60_000, min: 0, max: MAX_MARGIN_MS },
  MU_SPAWN_JOB_MS: { fallback: 30_000, min: 0, max: MAX_MS },
  MU_WAIT_LIVENESS_MS: { fallback: 10_000, min: 0, max: MAX_MS },
  MU_VIEW_READY_MS: { fallback: 1000, min: 0, max: MAX_MS },
  // Testbed only, and signed: a scenario may move now back.
  MU_CLOCK_OFFSET_MS: { fallback: 0, min: -MAX_MARGIN_MS, max: MAX_MARGIN_MS },
} as const;

export type MsVariable = keyof typeof MS_VARIABLES;

/** mu's tunable waits and margins, from the environment in milliseconds. */
export function envMs(env: Readonly<Record<string, string | undefined>>, name: MsVariable): number {
  const raw = env[name];
  const v = MS_VARIABLES[name];
  if (raw === undefined || raw === "") return v.fallback;
  return bounded(raw, {
    name,
    unit: "milliseconds",
    min: v.min,
    max: v.max,
    whole: true,
    example: v.fallback === 0 ? 60_000 : v.fallback,
    code: "env.ms",
  });
}

/** Refuses the first MU_*_MS variable that is set but not valid (every verb runs this first). */
export function checkEnvMs(env: Readonly<Record<string, string | undefined>>): void {
  for (const name of Object.keys(MS_VARIABLES) as MsVariable[]) envMs(env, name);
}
