import { dirname, join } from "node:path";
import { envMs, MS_VARIABLES } from "../env-ms.js";
import { UnavailableError } from "../errors.js";
import type { Ports } from "../ports/types.js";
import { type HeldLock, lockAttempts } from "../store/lock.js";
import { dbPath } from "../store/paths.js";
import { type HostProfile, identity } from "./profiles.js";

// A link that declares `slots: "mu"` leaves it to mu to keep a host under its
// channel limit: every link call holds one of the host's `--max-sessions`
// slots for as long as it runs. The mu processes of one machine share the
// slots through one lock file per slot beside the database, each naming its
// holder by pid and start time, so a holder that died frees its slot.

export const DEFAULT_SLOT_WAIT_MS = MS_VARIABLES.MU_SLOT_WAIT_MS.fallback;
const POLL_MS = 50;

export interface SlotBound {
  /** The machine the slots belong to: a profile's identity, not its name. */
  host: string;
  /** null: no bound set, so calls never wait. */
  maxSessions: number | null;
  slots: "mu" | "self";
}

export function slotWaitMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_SLOT_WAIT_MS");
}

/**
 * A machine's bound: the smallest --max-sessions among the profiles with its
 * identity (the profile itself included), or null when none sets one.
 */
export function machineBound(profiles: readonly HostProfile[], of: HostProfile): number | null {
  const bounds = profiles
    .filter((p) => identity(p) === identity(of))
    .map((p) => p.maxSessions)
    .concat(of.maxSessions)
    .filter((n): n is number => n !== null);
  return bounds.length > 0 ? Math.min(...bounds) : null;
}

/** Runs `fn` holding one of the host's slots, waiting for one if all are held. */
export async function withSlot<T>(
  ports: Ports,
  bound: SlotBound,
  onWait: (inUse: number) => void,
  fn: () => Promise<T>,
): Promise<T> {
  if (bound.slots !== "mu" || bound.maxSessions === null) return fn();
  const held = await takeSlot(ports, bound.host, bound.maxSessions, onWait);
  try {
    return await fn();
  } finally {
    await held.release();
  }
}

async function takeSlot(
  ports: Ports,
  host: string,
  max: number,
  onWait: (inUse: number) => void,
): Promise<HeldLock> {
  const dir = join(dirname(dbPath(ports.env)), "slots");
  await ports.fs.mkdirp(dir, 0o700);
  const wait = slotWaitMs(ports.env);
  const deadline = ports.clock.now() + wait;
  const attempt = lockAttempts(ports);
  let told = false;
  for (;;) {
    for (let i = 0; i < max; i++) {
      const r = await attempt(join(dir, `${encodeURIComponent(host)}.${i}.lock`));
      if ("release" in r) return r;
    }
    if (ports.clock.now() >= deadline) {
      throw new UnavailableError(
        "host.sessions-busy",
        "host",
        `all ${max} sessions of host '${host}' stayed in use for ${wait} ms`,
        { hint: "retry when they finish, or raise MU_SLOT_WAIT_MS or the host's --max-sessions" },
      );
    }
    if (!told) onWait(max);
    told = true;
    await ports.clock.sleep(POLL_MS + Math.floor(ports.random.fraction() * POLL_MS));
  }
}
