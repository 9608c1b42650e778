import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mermaid from "mermaid";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// A report's sequence diagram is only worth its words if Mermaid draws it:
// run a few files whose diagrams carry a crash, a signal, an EOF note and a
// refusal, and hand every diagram they wrote to Mermaid's own parser.

const FILES = [
  "host/lookup-found-after-mu-sigkilled",
  "plugin/invalid-first-named",
  "plugin/stdin-closed-call-unanswered",
];

function sequenceDocs(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sequenceDocs(p);
    return f === "sequence.md" ? [p] : [];
  });
}

it("every sequence diagram a run writes is one Mermaid parses", async () => {
  const reports = mkdtempSync(join(tmpdir(), "mu-mermaid-"));
  try {
    const r = spawnSync(
      process.execPath,
      [join(packageRoot(), "dist/sim/runner/main.js"), "--reports", reports, ...FILES],
      { encoding: "utf8" },
    );
    expect(r.stdout).toMatch(/scenarios: 3 passed, 0 failed\n$/);
    const docs = sequenceDocs(join(reports, "latest"));
    expect(docs.length).toBe(FILES.length);
    let diagrams = 0;
    for (const doc of docs) {
      for (const m of readFileSync(doc, "utf8").matchAll(/```mermaid\n([\s\S]*?)```/g)) {
        diagrams++;
        await expect(mermaid.parse(m[1] ?? ""), doc).resolves.toMatchObject({
          diagramType: "sequence",
        });
      }
    }
    expect(diagrams).toBeGreaterThanOrEqual(FILES.length);
  } finally {
    rmSync(reports, { recursive: true, force: true });
  }
}, 120_000);

it("the parser is strict enough to tell: a broken diagram is refused", async () => {
  await expect(mermaid.parse("sequenceDiagram\n  mu->>: half an arrow\n")).rejects.toThrow();
});
