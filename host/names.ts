import { UsageError } from "./errors.js";

// Agents, workstreams, tasks and hosts share one name rule: a name ends up in
// paths, tmux session names and one-line listings, so it may hold no slash,
// space, newline or leading dot.

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const NAME_RULE =
  "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** Throws the one-line usage error (exit 2) for a name that breaks the rule. */
export function checkName(what: string, value: string, code: string): void {
  if (NAME.test(value)) return;
  throw new UsageError(code, "usage", `${what} '${shown(value)}' is not valid`, {
    hint: NAME_RULE,
  });
}

/** A bad name as it can be printed on one line: escapes visible, length cut. */
function shown(value: string): string {
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped.length > 70 ? `${escaped.slice(0, 70)}…` : escaped;
}
