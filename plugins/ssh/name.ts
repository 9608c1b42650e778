// The plugin's name is the one it was registered under. mu requires the
// executable's basename to be mu-plugin-<name> and the handshake to answer
// that name, so a link to the launcher under another basename is another
// registration (another machine), with a channel of its own.

/** What a start not made through a mu-plugin-<name> path calls itself. */
export const DEFAULT_NAME = "ssh";

/** mu's own rule for a plugin name, after the prefix. */
const OWN = /^mu-plugin-([a-z0-9][a-z0-9-]{0,62})$/;

/**
 * The name for a start whose argv[0] (as the launcher was run, before any
 * link is resolved) is `startedAs`: the part after mu-plugin-, or
 * DEFAULT_NAME when that path's basename is not a name mu could register.
 */
export function nameFrom(startedAs: string | undefined): string {
  if (!startedAs) return DEFAULT_NAME;
  const base = startedAs.slice(startedAs.lastIndexOf("/") + 1);
  return OWN.exec(base)?.[1] ?? DEFAULT_NAME;
}
