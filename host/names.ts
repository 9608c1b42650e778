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

/**
 * An agent as the user typed it: `name` in `-w`'s workstream (default main),
 * or `<workstream>/<name>`, the way mu prints agents. The two may agree, not
 * contradict.
 */
export function agentRef(
  typed: string,
  workstream: string | undefined,
): { workstream: string; name: string } {
  const slash = typed.indexOf("/");
  // A name no spawn could have made is a usage error, not "no agent" (exit 3).
  if (workstream !== undefined) checkName("workstream", workstream, "agent.ref");
  if (slash === -1) {
    checkName("agent name", typed, "agent.ref");
    return { workstream: workstream ?? "main", name: typed };
  }
  const ws = typed.slice(0, slash);
  const name = typed.slice(slash + 1);
  if (ws === "" || name === "" || name.includes("/")) {
    throw new UsageError("agent.ref", "usage", `'${typed}' is not an agent name`, {
      hint: "give <name> or <workstream>/<name>",
    });
  }
  if (workstream !== undefined && workstream !== ws) {
    throw new UsageError(
      "agent.ref",
      "usage",
      `'${typed}' is in workstream ${ws}, but -w says ${workstream}`,
      {
        hint: `drop -w, or give just the name`,
      },
    );
  }
  checkName("workstream", ws, "agent.ref");
  checkName("agent name", name, "agent.ref");
  return { workstream: ws, name };
}
