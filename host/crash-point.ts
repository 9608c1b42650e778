import type { Ports } from "./ports/types.js";

// The testbed's fault hook. Each point is a named durable boundary in mu;
// when the environment variable MU_CRASH_AT names exactly that point, mu
// dies there through its ports' crash (in production a SIGKILL of itself;
// in the virtual engine the process leaves the table), so a scenario can
// prove what survives a crash at that moment (no handler, no flush, no
// cleanup runs, as with a power cut or the OOM killer). With MU_CRASH_AT
// unset or naming another point, crashPoint does nothing. Plugins never
// inherit MU_CRASH_AT. Add new points to the union below and to docs/testbed.md's
// table.

export type CrashPointName =
  /** The new database bytes are fsynced to their temp file, not yet renamed over. */
  | "store.before-rename"
  /** A retention pass's archive segment is fsynced to its temp file, not yet renamed. */
  | "archive.before-rename"
  /** The segment is in place; the database commit that vouches for it is not yet written. */
  | "archive.written"
  /** An effect's intent is durable; its request is not yet written. */
  | "effect.intent-durable"
  /** The effect's request is written to the plugin; no reply read yet. */
  | "effect.request-written"
  /** The plugin's definite reply is read; the intent is not yet deleted. */
  | "effect.reply-read"
  /** The intent is deleted and the outcome recorded. */
  | "effect.intent-deleted"
  /** An agent's view pane is open; the agent's row does not name it yet. */
  | "view.pane-opened"
  /** The agent's row names its view; readiness and the first prompt are not done yet. */
  | "view.recorded";

/** Awaited, so a crash that cannot end the process at once (a virtual one) still stops it here. */
export async function crashPoint(name: CrashPointName, ports: Ports): Promise<void> {
  if (ports.env.MU_CRASH_AT === name) await ports.crash();
}
