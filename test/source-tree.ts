import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { packageRoot } from "../host/package-root.js";

/** Every TypeScript source under the given top-level folders, as paths from the package root. */
export function sourceFiles(tops: string[]): string[] {
  const root = packageRoot();
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(relative(root, p));
    }
  };
  for (const t of tops) walk(join(root, t));
  return out.sort();
}
