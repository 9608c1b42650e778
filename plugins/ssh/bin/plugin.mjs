// What mu-plugin-ssh runs once it started the ssh master: the built plugin,
// the build's one-file bundle, unless a later tsc alone left it stale.
import { statSync } from "node:fs";

const mtime = (rel) => statSync(new URL(rel, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
const bundle = mtime("../../../dist/mu/ssh-plugin.js");
const tsc = mtime("../../../dist/plugins/ssh/main.js");
await import(
  bundle !== undefined && (tsc === undefined || bundle >= tsc)
    ? "../../../dist/mu/ssh-plugin.js"
    : "../../../dist/plugins/ssh/main.js"
);
