import type { RunContext, Session } from "./session.js";
import { CHECK_HOST } from "./target.js";
import { type Cleanup, describeCall } from "./verdict.js";

// A provider's part of the cleanup: every key the run sent an acquire for is
// released again unless a release already answered null for it. Each check
// releases its own; this catches an acquire that took effect though it was
// refused, timed out, or came from a check cut short.

const EFFECT_MS = 60_000;

export async function releaseMachines(
  ctx: RunContext,
  open: () => Promise<Session>,
): Promise<Cleanup> {
  const out: Cleanup = { removed: [], left: [] };
  const hosts = ctx.made.hosts;
  if (hosts.size === 0) return out;
  const owed = [...hosts].filter(([, h]) => !h.released);
  let s: Session | undefined;
  try {
    if (owed.length > 0) s = await open();
    for (const [key, h] of owed) {
      const host = {
        name: CHECK_HOST,
        instance: s?.hello.instance,
        ...(h.handle ? { handle: h.handle } : {}),
      };
      const r = await s?.call("host.release", { target: { host }, key }, EFFECT_MS).then(
        (v) => (v === null ? "" : `it answered ${JSON.stringify(v).slice(0, 100)}`),
        (err) => describeCall(err),
      );
      if (r)
        out.left.push({
          what: `the machine for key ${key}${h.handle ? ` (${h.handle})` : ""}: the release at the end failed (${r}); release it at the provider`,
        });
    }
  } catch (err) {
    out.left.push({
      what: `the machines for keys ${owed.map(([k]) => k).join(", ")}: the cleanup could not start the plugin (${describeCall(err)}); release them at the provider`,
    });
  } finally {
    await s?.close();
  }
  if (out.left.length === 0) {
    const machines = [...hosts.values()].filter((h) => h.handle).length;
    const refused = hosts.size - machines;
    const late = owed.filter(([, h]) => h.handle).length;
    out.removed.push(
      `released every machine it acquired (${machines}${late > 0 ? `, ${late} of them at the end` : ""})${refused > 0 ? `, and released by key the ${refused} whose acquire was refused, in case one took effect all the same` : ""}`,
    );
  }
  return out;
}
