import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { packageRoot } from "../../host/package-root.js";
import { unknownProof } from "./proven-ids.js";
import { type LoadedScenario, ownStdio, type Scenario } from "./scenario.js";
import { explain, type SchemaError } from "./schema-errors.js";

let check: ValidateFunction | undefined;

function validator() {
  if (!check) {
    const schema = JSON.parse(
      readFileSync(join(packageRoot(), "schemas/scenario.schema.json"), "utf8"),
    );
    // verbose: each error carries its branch's schema, so an unknown key can be
    // matched to the keys that branch knows.
    check = new Ajv2020({ allErrors: true, strict: true, verbose: true }).compile(schema);
  }
  return check;
}

export class ScenarioFileError extends Error {}

export function loadScenario(file: string): LoadedScenario {
  return loadScenarioAs(file, idOf(file));
}

/** A file read from elsewhere than scenarios/ (a doc's example), which must give `id`. */
export function loadScenarioAs(file: string, id: string): LoadedScenario {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ScenarioFileError(
      `${file}: not valid YAML: ${(err as Error).message.split("\n")[0]}`,
    );
  }
  const v = validator();
  if (!v(doc)) {
    throw new ScenarioFileError(
      `${file}: ${explain((v.errors ?? []) as SchemaError[])} (schemas/scenario.schema.json)`,
    );
  }
  const s = doc as Scenario;
  // A background run is judged at its join, after the steps between have
  // already expanded their patterns: a capture there could never be read.
  const late = s.steps.findIndex((st) => "mu" in st && st.background && st.capture);
  if (late !== -1) {
    throw new ScenarioFileError(
      `${file}: step ${late + 1} captures from a background run, which no later step could read; capture in a step that is not in the background`,
    );
  }
  const both = s.steps.findIndex(
    (st) => "mu" in st && st.stdin !== undefined && st.stdinFile !== undefined,
  );
  if (both !== -1)
    throw new ScenarioFileError(
      `${file}: step ${both + 1} gives both stdin and stdinFile; give mu one stdin`,
    );
  const fed = s.steps.findIndex((st) => "mu" in st && ownStdio(st) !== undefined);
  if (fed !== -1 && s.virtualOnly !== undefined)
    throw new ScenarioFileError(
      `${file}: step ${fed + 1} gives mu a stdin or a closed stdout, which only the real engine does, yet the file is virtualOnly; drop one of them`,
    );
  for (const id of s.proves) {
    const why = unknownProof(id);
    if (why) throw new ScenarioFileError(`${file}: ${why}`);
  }
  const rel = id;
  if (s.scenario !== rel) {
    throw new ScenarioFileError(`${file}: scenario id '${s.scenario}' should be its path '${rel}'`);
  }
  return { ...s, file };
}

/** A file's scenario id: its path under scenarios/, without the extension. */
export function idOf(file: string): string {
  return relative(join(packageRoot(), "scenarios"), file).replace(/\.ya?ml$/, "");
}

/**
 * The files whose id holds any of the parts (all without parts). Chosen by
 * path, before loading: a bad file elsewhere does not block a filtered run.
 */
export function selectFiles(files: readonly string[], parts: readonly string[]): string[] {
  return files.filter((f) => parts.length === 0 || parts.some((p) => idOf(f).includes(p)));
}

/** Every scenario file under dir, in a stable order. */
export function findScenarioFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findScenarioFiles(p));
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out;
}
