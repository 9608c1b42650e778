import { clipMark } from "./wire.js";

// What the suite quotes of a plugin never carries the canary it handed it.

/**
 * The canary, whole or cut: an excerpt is clipped where the plugin's text
 * is quoted, before this mask runs, so a canary across the cut ends in
 * clip's mark with only its first characters; those go too.
 */
export function hideCanary(text: string, value: string): string {
  let out = text.replaceAll(value, "<canary>");
  // Three characters or fewer say nothing, and would mask ordinary words.
  for (let n = value.length - 1; n >= 4; n--)
    out = out.replaceAll(`${value.slice(0, n)}${clipMark}`, `<canary>${clipMark}`);
  return out;
}
