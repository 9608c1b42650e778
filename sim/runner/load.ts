import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { packageRoot } from "../../host/package-root.js";
import type { LoadedScenario, Scenario } from "./scenario.js";

let check: ((v: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};

function validator() {
  if (!check) {
    const schema = JSON.parse(
      readFileSync(join(packageRoot(), "schemas/scenario.schema.json"), "utf8"),
    );
    check = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
  }
  return check;
}

export class ScenarioFileError extends Error {}

export function loadScenario(file: string): LoadedScenario {
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
    const why = (v.errors ?? [])
      .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
      .join("; ");
    throw new ScenarioFileError(`${file}: does not match schemas/scenario.schema.json: ${why}`);
  }
  const s = doc as Scenario;
  const rel = relative(join(packageRoot(), "scenarios"), file).replace(/\.ya?ml$/, "");
  if (s.scenario !== rel) {
    throw new ScenarioFileError(`${file}: scenario id '${s.scenario}' should be its path '${rel}'`);
  }
  return { ...s, file };
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
