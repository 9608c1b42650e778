import { UsageError } from "./errors.js";

// mu's tunable waits and margins come from the environment in milliseconds;
// a value that is not a number is a usage error naming the variable.

export function envMs(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new UsageError("env.ms", "usage", `${name}='${raw}' is not valid`, {
      hint: `give a number of milliseconds, e.g. ${name}=${fallback}`,
    });
  }
  return ms;
}
