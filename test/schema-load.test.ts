import { createHash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { nodeScript } from "./helpers.js";
import { LINK } from "./plugin-fixtures.js";

// Where the built schema module takes its digest and validators from: the
// build's precompiled modules only while they were made from the very file
// shipped beside them, ajv's compile otherwise. Each case runs the built
// module in a new Node over a copy of the package's layout, spoiled as a
// stale or damaged install would be.

const root = packageRoot();
const SCHEMA = "schemas/plugin-protocol-v1.json";
const names = (
  JSON.parse(readFileSync(join(root, SCHEMA), "utf8")) as { $defs: Record<string, unknown> }
).$defs;
const linkIndex = Object.keys(names).indexOf("seam.link");

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** The package's files the schema module needs, copied; `withBuild` adds the validators. */
function layout(withBuild = true): string {
  const dir = mkdtempSync(join(tmpdir(), "mu-schema-"));
  dirs.push(dir);
  copyFileSync(join(root, "package.json"), join(dir, "package.json"));
  mkdirSync(join(dir, "schemas"));
  copyFileSync(join(root, SCHEMA), join(dir, SCHEMA));
  mkdirSync(join(dir, "dist/host/protocol"), { recursive: true });
  copyFileSync(join(root, "dist/host/checksum.js"), join(dir, "dist/host/checksum.js"));
  copyFileSync(
    join(root, "dist/host/protocol/schema.js"),
    join(dir, "dist/host/protocol/schema.js"),
  );
  if (withBuild) {
    copyFileSync(
      join(root, "dist/host/protocol/validators.cjs"),
      join(dir, "dist/host/protocol/validators.cjs"),
    );
    cpSync(
      join(root, "dist/host/protocol/validators"),
      join(dir, "dist/host/protocol/validators"),
      {
        recursive: true,
      },
    );
  }
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  return dir;
}

interface Seen {
  digest: string;
  source: string;
  slots: Record<string, unknown>;
  ajvLoaded: boolean;
}

/** The built module's answers in a new Node, over the layout at `dir`. */
function ask(dir: string, slots: string[] = ["self", "both"]): Seen {
  const schema = JSON.stringify(join(dir, "dist/host/protocol/schema.js"));
  const script = `
    import { createRequire } from "node:module";
    const s = await import(${schema});
    const slots = {};
    for (const v of ${JSON.stringify(slots)}) {
      const r = s.validate("seam.link", { ...${JSON.stringify(LINK)}, slots: v });
      slots[v] = r.ok ? "ok" : r.errors;
    }
    // The precompiled modules need only ajv's small runtime helpers.
    const ajvLoaded = Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes("/ajv/dist/2020"));
    console.log(JSON.stringify({ digest: s.schemaDigest(), source: s.validatorsSource(), slots, ajvLoaded }));
  `;
  const r = nodeScript(script, {}, { cwd: dir });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Seen;
}

const sha256 = (dir: string) =>
  `sha256:${createHash("sha256")
    .update(readFileSync(join(dir, SCHEMA)))
    .digest("hex")}`;

const BOTH_REFUSED = ["/slots: must be one of mu, self"];

describe("the schema module's validators and digest", () => {
  it("uses the build's validators for the file they were made from, and never loads ajv", () => {
    const dir = layout();
    expect(ask(dir)).toEqual({
      digest: sha256(dir),
      source: "build",
      slots: { self: "ok", both: BOTH_REFUSED },
      ajvLoaded: false,
    });
  });

  it("compiles with ajv when there is no build", () => {
    const dir = layout(false);
    expect(ask(dir)).toEqual({
      digest: sha256(dir),
      source: "ajv",
      slots: { self: "ok", both: BOTH_REFUSED },
      ajvLoaded: true,
    });
  });

  it("follows a schema file changed after the build, even one of the same length", () => {
    const dir = layout();
    const file = join(dir, SCHEMA);
    const text = readFileSync(file, "utf8");
    const changed = text.replace('"const": "self"', '"const": "SELF"');
    expect(changed).not.toBe(text);
    expect(changed.length).toBe(text.length);
    writeFileSync(file, changed);
    expect(ask(dir, ["self", "SELF"])).toEqual({
      digest: sha256(dir),
      source: "ajv",
      slots: { self: ["/slots: must be one of mu, SELF"], SELF: "ok" },
      ajvLoaded: true,
    });
  });

  it("walks past a directory with a package.json of its own to the package's schema", () => {
    const dir = layout();
    writeFileSync(join(dir, "dist/package.json"), '{ "type": "module" }\n');
    expect(ask(dir)).toMatchObject({ digest: sha256(dir), source: "build" });
  });

  it("says which file it cannot find, rather than walk on forever", () => {
    const dir = layout();
    rmSync(join(dir, SCHEMA));
    const schema = JSON.stringify(join(dir, "dist/host/protocol/schema.js"));
    const r = nodeScript(`const s = await import(${schema}); s.schemaDigest();`, {}, { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /Error: cannot find schemas\/plugin-protocol-v1\.json above file:\/\/\S+\/dist\/host\/protocol\/schema\.js\n/,
    );
  });

  it("compiles with ajv when the build's index is damaged", () => {
    const dir = layout();
    writeFileSync(join(dir, "dist/host/protocol/validators.cjs"), "module.exports = {;\n");
    expect(ask(dir)).toMatchObject({
      digest: sha256(dir),
      source: "ajv",
      slots: { self: "ok", both: BOTH_REFUSED },
    });
  });

  it.each([
    ["damaged", "module.exports = {;\n"],
    [
      "made from another schema",
      'module.exports.v = () => true;\nmodule.exports.DIGEST = "sha256:0";\n',
    ],
    ["without a validator", `module.exports.DIGEST = ${JSON.stringify("@")};\n`],
  ])("compiles a def with ajv when its module is %s", (_what, body) => {
    const dir = layout();
    const digest = sha256(dir);
    writeFileSync(
      join(dir, `dist/host/protocol/validators/v${linkIndex}.cjs`),
      body.replace('"@"', JSON.stringify(digest)),
    );
    expect(ask(dir)).toEqual({
      digest,
      source: "build",
      slots: { self: "ok", both: BOTH_REFUSED },
      ajvLoaded: true,
    });
  });
});
