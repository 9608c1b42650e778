import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { runScenario } from "../sim/runner/execute.js";
import { loadScenarioAs } from "../sim/runner/load.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// docs/testbed.md opens with a complete scenario a reader can copy. This
// takes that block as written, loads it as the runner would and runs it on
// both engines, so the example cannot drift from the format or stop passing.

function example(): { yaml: string; path: string } {
  const doc = readFileSync(join(packageRoot(), "docs/testbed.md"), "utf8");
  const first = doc.indexOf("## A first scenario");
  expect(first).toBeGreaterThan(-1);
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(first));
  const path = /Save this as `scenarios\/([^`]+)\.yaml`/.exec(doc.slice(first));
  expect(block && path).toBeTruthy();
  return { yaml: block?.[1] ?? "", path: path?.[1] ?? "" };
}

it("docs/testbed.md's first scenario is about ten lines and names its file's id", () => {
  const { yaml, path } = example();
  const lines = yaml.trimEnd().split("\n").length;
  expect(lines).toBeGreaterThanOrEqual(8);
  expect(lines).toBeLessThanOrEqual(14);
  expect(yaml).toContain(`scenario: ${path}\n`);
});

it("docs/testbed.md's first scenario loads and passes on the real and the virtual engine", async () => {
  const { yaml, path } = example();
  const dir = mkdtempSync(join(tmpdir(), "mu-doc-example-"));
  try {
    const file = join(dir, "example.yaml");
    writeFileSync(file, yaml);
    const s = loadScenarioAs(file, path);
    const real = await runScenario(s);
    expect(real.failure).toBeUndefined();
    expect(real.ok).toBe(true);
    const virtual = await runVirtual(s);
    expect(virtual.ran && virtual.failure).toBeFalsy();
    expect(virtual.ran).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
