import { readFileSync } from "node:fs";
import { join } from "node:path";
import { closest } from "../../host/closest.js";
import { RULE_TABLE } from "../../host/effects/rule-table.js";
import { packageRoot } from "../../host/package-root.js";

// What a scenario's `proves` may name: a replay rule, a field report
// (`field.*`), or an id docs/decisions.md lists under its heading for them.
// An id nothing defines would show in the summary as if it were a rule.

export const PROVEN_IDS_HEADING = "## Ids a scenario may prove";

let known: Set<string> | undefined;

/** The ids docs/decisions.md lists: every backquoted word of its table, from the heading to the next one. */
export function documentedIds(text: string): string[] {
  const from = text.indexOf(PROVEN_IDS_HEADING);
  if (from === -1) return [];
  const rest = text.slice(from + PROVEN_IDS_HEADING.length);
  const end = rest.search(/\n## /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return section
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| area "))
    .flatMap((l) => [...l.matchAll(/`([a-z0-9][a-z0-9.-]*)`/g)].map((m) => m[1] as string));
}

function knownIds(): Set<string> {
  if (!known) {
    const doc = readFileSync(join(packageRoot(), "docs/decisions.md"), "utf8");
    known = new Set([...RULE_TABLE.map((r) => r.id), ...documentedIds(doc)]);
  }
  return known;
}

/** Why an id may not be proved (with the closest one that may), or undefined when it may. */
export function unknownProof(id: string): string | undefined {
  if (id.startsWith("field.") || knownIds().has(id)) return undefined;
  const near = closest(id, knownIds());
  return `proves '${id}', which no rule or listed id defines${near ? ` (closest: '${near}')` : ""}; fix it, or list it in docs/decisions.md under "${PROVEN_IDS_HEADING.slice(3)}"`;
}
