import type { TermSignal } from "../plugin/terminator.js";

// The one line mu prints when a signal cut a verb short: which verb, and the
// command that picks up from there. A wait only watched, so it can simply
// run again; a verb that writes may have left an effect pending, which
// `mu state` lists with the way to settle it.

const NEXT: Record<string, (argv: string) => string> = {
  wait: (argv) => `nothing was changed; wait again: mu ${argv}`,
  "agent spawn": () =>
    "the spawn may be half done: mu state says what is pending, mu agent list what runs",
  "agent close": () => "the close may be half done: see mu state, then run it again",
  "agent read": (argv) => `nothing was changed; read again: mu ${argv}`,
  "agent list": () => "nothing was changed; list again: mu agent list",
  "agent check": (argv) => `nothing was changed; check again: mu ${argv}`,
  "host check": (argv) => `nothing was changed; check again: mu ${argv}`,
  "host status": (argv) => `run it again: mu ${argv}`,
  "host exec": () =>
    "the script may have run in part on the host; look there before running it again",
  "host fetch": (argv) => `a fetch is safe to repeat: mu ${argv}`,
  "host push": (argv) => `a push is safe to repeat: mu ${argv}`,
  "plugin add": () => "nothing was recorded; run it again",
  // Its own stop sends no job.stop, host.release or clean-up script: what a
  // check made stays on the backend.
  "plugin check": () =>
    "nothing was recorded; a job, machine or directory it made (named mu-check-*) may be left on the plugin's backend; run it again",
};

/** `mu: interrupted: …` for the verb at `path` (e.g. `agent spawn`), run as `argv`. */
export function interruptedLine(path: string, argv: string[], signal: TermSignal): string {
  const shown = argv.length > 12 ? `${argv.slice(0, 12).join(" ")} …` : argv.join(" ");
  const next =
    NEXT[path]?.(shown) ?? "anything it left pending is listed, with its next step, by: mu state";
  return `mu: interrupted: mu ${path} stopped by ${signal} (its plugins were stopped first); ${next}\n`;
}
