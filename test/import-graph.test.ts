import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { sourceFiles } from "./source-tree.js";

// No module of host/ or sim/ may reach itself through its imports. A circle
// makes load order matter and hides which module is the lower layer; type-only
// and lazy imports count too, since a reader follows them the same way.

/** Each source's relative imports that land on another source of the set. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const src = readFileSync(join(packageRoot(), f), "utf8");
    const deps = ts
      .preProcessFile(src, true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((s) => s.startsWith("."))
      .map((s) => normalize(join(dirname(f), s)).replace(/\.js$/, ".ts"))
      .filter((d) => known.has(d));
    graph.set(f, [...new Set(deps)]);
  }
  return graph;
}

/** The strongly connected components with more than one module, or a self-import (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (;;) {
      const w = stack.pop() as string;
      onStack.delete(w);
      part.push(w);
      if (w === v) break;
    }
    if (part.length > 1 || graph.get(v)?.includes(v)) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

it("finds a circle when there is one", () => {
  const g = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts"]],
    ["c.ts", ["a.ts"]],
    ["d.ts", ["a.ts"]],
  ]);
  expect(circles(g)).toEqual([["a.ts", "b.ts", "c.ts"]]);
});

it("has no import circle in host/ or sim/", () => {
  const graph = importGraph(sourceFiles(["host", "sim"]));
  expect(graph.size).toBeGreaterThan(100);
  const report = circles(graph).map((c) =>
    c.map((f) => `${f} -> ${(graph.get(f) ?? []).filter((d) => c.includes(d)).join(", ")}`),
  );
  expect(report).toEqual([]);
});
