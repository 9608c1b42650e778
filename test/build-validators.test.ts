import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { mutantEnv } from "./helpers.js";

// The build compiles the protocol schema into one validator module per def
// and an index that names them, with the schema's digest, length and CRC-32
// (host/protocol/build-validators.ts). mu trusts those files while the
// schema matches, so the step must give the same files every time it runs
// on the same schema: run again in a copy of the package, it must write
// exactly what the build wrote.

const root = packageRoot();
const built = join(root, "dist/host/protocol");

let pkg: string;
beforeEach(() => {
  pkg = mkdtempSync(join(tmpdir(), "mu-validators-"));
  cpSync(join(root, "dist/host"), join(pkg, "dist/host"), { recursive: true });
  cpSync(join(root, "schemas"), join(pkg, "schemas"), { recursive: true });
  cpSync(join(root, "package.json"), join(pkg, "package.json"));
  symlinkSync(join(root, "node_modules"), join(pkg, "node_modules"));
  rmSync(join(pkg, "dist/host/protocol/validators"), { recursive: true });
  rmSync(join(pkg, "dist/host/protocol/validators.cjs"));
});
afterEach(() => rmSync(pkg, { recursive: true, force: true }));

describe("the validator build step", () => {
  it("writes the same index and modules as the build did, byte for byte", () => {
    const here = join(pkg, "dist/host/protocol");
    const r = spawnSync(process.execPath, [join(here, "build-validators.js")], {
      env: { PATH: process.env.PATH ?? "", ...mutantEnv() },
      encoding: "utf8",
    });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(here, "validators.cjs"), "utf8")).toBe(
      readFileSync(join(built, "validators.cjs"), "utf8"),
    );
    const names = readdirSync(join(built, "validators")).sort();
    expect(readdirSync(join(here, "validators")).sort()).toEqual(names);
    for (const n of names)
      expect(readFileSync(join(here, "validators", n), "utf8"), n).toBe(
        readFileSync(join(built, "validators", n), "utf8"),
      );
  });

  it("leaves an index whose digest and size are the schema file's", () => {
    const index = readFileSync(join(built, "validators.cjs"), "utf8");
    const schema = readFileSync(join(root, "schemas/plugin-protocol-v1.json"));
    expect(index).toContain(`module.exports.SCHEMA_BYTES = ${schema.length};`);
    expect(index).toMatch(/^module\.exports\.NAMES = \["[^\]]+\];$/m);
    const sha = createHash("sha256").update(schema).digest("hex");
    expect(index).toContain(`module.exports.DIGEST = "sha256:${sha}";`);
  });
});
