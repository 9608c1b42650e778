// A scenario file that breaks the schema, said the way its author can act
// on: where (step N, or the fault's path), which key is unknown and the
// known key it most likely meant. A step is one of several kinds, so the
// validator reports the same mistake once per kind; the kind whose required
// keys the step has is the one its author meant.

import { distance } from "../../host/closest.js";

export interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  data?: unknown;
  parentSchema?: { properties?: Record<string, unknown>; required?: string[] };
}

/** "/steps/2/world/faults/0" as "step 3: world/faults/0". */
export function where(path: string): string {
  const m = /^\/steps\/(\d+)(\/.*)?$/.exec(path);
  if (!m) return path === "" ? "the top level" : path.slice(1);
  const rest = m[2] ? `: ${m[2].slice(1)}` : "";
  return `step ${Number(m[1]) + 1}${rest}`;
}

interface Unknown {
  at: string;
  key: string;
  known: string[];
  closest: string;
  gap: number;
}

/** The branch its author meant: the step has every key the branch requires. */
function meant(e: SchemaError): boolean {
  const data = e.data;
  if (typeof data !== "object" || data === null) return false;
  return (e.parentSchema?.required ?? []).every((k) => k in data);
}

function unknownKeys(errors: readonly SchemaError[]): Unknown[] {
  const out: Unknown[] = [];
  for (const e of errors) {
    if (e.keyword !== "additionalProperties" || !meant(e)) continue;
    const key = String(e.params.additionalProperty);
    const known = Object.keys(e.parentSchema?.properties ?? {});
    const ranked = known
      .map((k) => ({ k, d: distance(key, k) }))
      .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k));
    out.push({
      at: where(e.instancePath),
      key,
      known,
      closest: ranked[0]?.k ?? "",
      gap: ranked[0]?.d ?? Number.POSITIVE_INFINITY,
    });
  }
  return out;
}

/** One short explanation of what is wrong, the most likely mistake first. */
export function explain(errors: readonly SchemaError[]): string {
  const unknown = unknownKeys(errors);
  if (unknown.length > 0) {
    return unknown
      .map((u) => {
        const hint =
          u.gap <= Math.max(2, Math.floor(u.key.length / 3))
            ? ` (did you mean '${u.closest}'?)`
            : "";
        return `${u.at}: unknown key '${u.key}'${hint}; known keys: ${u.known.join(", ")}`;
      })
      .join("; ");
  }
  // No branch fits: say what the deepest errors say, each once.
  const depth = (e: SchemaError) => e.instancePath.split("/").length;
  const deepest = Math.max(...errors.map(depth));
  const lines = [
    ...new Set(
      errors
        .filter((e) => depth(e) === deepest && e.keyword !== "oneOf")
        .map(
          (e) =>
            `${where(e.instancePath)}: ${
              e.keyword === "additionalProperties"
                ? `unknown key '${String(e.params.additionalProperty)}'`
                : (e.message ?? e.keyword)
            }`,
        ),
    ),
  ];
  return lines.slice(0, 3).join("; ") + (lines.length > 3 ? `; and ${lines.length - 3} more` : "");
}
