import { unknownCrashPoint } from "./crash-point.js";
import { checkEnvMs } from "./env-ms.js";
import { UsageError } from "./errors.js";
import type { Ports } from "./ports/types.js";

// Every MU_* variable mu reads is checked before any verb runs, whether or
// not that verb reads it: a bad value is refused the first time it is set,
// not the day some verb needs it. MU_CRASH_AT is a testbed hook that is
// inert by design when it names nothing, so a misspelt one is only warned of.

/** Variables that take one of a few words; "" counts as unset. */
const WORDS: Record<string, readonly string[]> = {
  MU_MUX: ["tmux", "sim"],
  MU_MUX_SIM: ["fail-start", "dies", "no-command-line"],
  MU_TRACE_CONTENT: ["0", "1"],
};

export function checkEnv(ports: Pick<Ports, "env" | "muxes">, warn: (line: string) => void): void {
  const env = ports.env;
  checkEnvMs(env);
  for (const [name, words] of Object.entries(WORDS)) {
    const v = env[name];
    if (v === undefined || v === "") continue;
    const allowed = name === "MU_MUX" ? [...words, ...Object.keys(ports.muxes ?? {})] : words;
    if (allowed.includes(v)) continue;
    const shown = JSON.stringify(v).slice(1, -1);
    throw new UsageError("env.word", "usage", `${name}='${shown}' is not valid`, {
      hint: `give one of ${words.join(", ")}, or unset it`,
    });
  }
  const line = unknownCrashPoint(env);
  if (line) warn(line);
}
