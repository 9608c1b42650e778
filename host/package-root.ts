import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The same module runs from host/ (tests, as TypeScript) and from dist/host/
// (the built bin), so shipped files are found by walking up to the package.
let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "schemas"))) {
      root = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the mu package root above ${import.meta.url}`);
    dir = up;
  }
}

let version: string | undefined;

export function packageVersion(): string {
  version ??= (
    JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }
  ).version;
  return version;
}
