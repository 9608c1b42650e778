import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// docs/glossary.md defines each term once; the pages link to it, and every
// link into it names a term it defines.

const root = packageRoot();
const glossary = readFileSync(join(root, "docs/glossary.md"), "utf8");
const anchors = [...glossary.matchAll(/^## (.+)$/gm)].map((m) =>
  (m[1] as string).toLowerCase().replace(/ /g, "-"),
);

it("defines about fifteen terms, each once", () => {
  expect(anchors.length).toBeGreaterThanOrEqual(15);
  expect(new Set(anchors).size).toBe(anchors.length);
});

it("is linked from the README, beside the protocol page", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  expect(readme).toContain("(docs/glossary.md)");
  expect(readme).toContain("(docs/protocol.md)");
});

it("every link into it names a term it defines, and each term is linked from some page", () => {
  const pages = [
    "README.md",
    ...readdirSync(join(root, "docs"))
      .filter((f) => f.endsWith(".md") && f !== "glossary.md")
      .map((f) => `docs/${f}`),
  ];
  const linked = new Set<string>();
  for (const p of pages) {
    const text = readFileSync(join(root, p), "utf8");
    for (const m of text.matchAll(/glossary\.md#([a-z-]+)\)/g)) {
      expect(anchors, `${p} links #${m[1]}`).toContain(m[1]);
      linked.add(m[1] as string);
    }
  }
  const unlinked = anchors.filter((a) => !linked.has(a) && a !== "job" && a !== "runs");
  expect(unlinked).toEqual([]);
});
