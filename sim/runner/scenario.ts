// The scenario file format as types; schemas/scenario.schema.json is the
// authority and load.ts validates every file against it before it runs.

export type Args = string | string[];

export interface MuStep {
  mu: Args;
  exit?: number;
  stdout?: string;
  stderr?: string;
  stderrLines?: number;
  env?: Record<string, string>;
}

export interface DamageStep {
  damage: { db: "truncate-half" | "truncate-odd" | "garbage" | "zero" };
}

export interface ExpectStep {
  expect: { db?: "unchanged"; leftoverFiles?: "none" };
}

export type Step = MuStep | DamageStep | ExpectStep;

export interface Scenario {
  scenario: string;
  about: string;
  proves: string[];
  steps: Step[];
}

export interface LoadedScenario extends Scenario {
  file: string;
}

export function argv(args: Args): string[] {
  return typeof args === "string" ? args.trim().split(/\s+/) : args;
}

export function describeStep(step: Step): string {
  if ("mu" in step) return `mu ${argv(step.mu).join(" ")}`;
  if ("damage" in step) return `damage db: ${step.damage.db}`;
  return `expect ${Object.entries(step.expect)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ")}`;
}
