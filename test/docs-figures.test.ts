import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { findScenarioFiles, loadScenario } from "../sim/runner/load.js";
import { needsRealEngine } from "../sim/virtual/can-run.js";

// Figures the docs give about the scenario files drift with every file
// added; each is checked here against the files themselves.

const scenarios = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
const virtual = scenarios.filter((s) => needsRealEngine(s) === undefined).length;
const only = scenarios.filter((s) => s.virtualOnly !== undefined).length;
const words = [
  "none",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
  "twenty",
];
const text = (f: string) => readFileSync(join(packageRoot(), f), "utf8").replace(/\s+/g, " ");

it("the README's counts of scenario files are the files'", () => {
  expect(text("README.md")).toContain(
    `engine runs ${virtual} of the ${scenarios.length} files in-process on virtual time, ${words[only]} of them only there`,
  );
});

it("docs/virtual.md's counts of scenario files are the files'", () => {
  const doc = text("docs/virtual.md");
  expect(doc).toContain(`${virtual} of the ${scenarios.length} run there`);
  expect(doc).toContain(`${words[only]} (\`virtualOnly\`) run only there`);
  expect(doc).toContain(`the other ${scenarios.length - virtual} needs the real engine`);
});
