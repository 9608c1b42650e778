import type { Session } from "./session.js";

/**
 * Runs fn on a fresh start of the plugin, then SIGKILLs that start's group,
 * as a killed mu leaves it: whatever the plugin promised must already be
 * true outside the process by the time it answered.
 */
export async function inFresh<T>(s: Session, fn: (p: Session) => Promise<T>): Promise<T> {
  const p = await s.again();
  try {
    return await fn(p);
  } finally {
    await p.kill();
  }
}
