import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { crc32 } from "../checksum.js";

// The shipped protocol schema: its digest (what a plugin's handshake must
// name) and validators for its defs. The file is read once; each def is
// compiled on first use and kept.

const FILE = join("schemas", "plugin-protocol-v1.json");
const DEFS = "#/$defs/";

export type Validation = { ok: true } | { ok: false; errors: string[] };

interface Loaded {
  path: string;
  bytes: Buffer;
  schema: { $id: string; $defs: Record<string, unknown> };
}

let loaded: Loaded | undefined;

// The module runs as host/protocol/schema.ts under vitest and as
// dist/host/protocol/schema.js when built: walk up to the package.
function load(): Loaded {
  if (loaded) return loaded;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const path = join(dir, FILE);
    if (existsSync(path) && existsSync(join(dir, "package.json"))) {
      const bytes = readFileSync(path);
      loaded = { path, bytes, schema: JSON.parse(bytes.toString("utf8")) as Loaded["schema"] };
      return loaded;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find ${FILE} above ${import.meta.url}`);
    dir = up;
  }
}

/** Absolute path of the shipped schema file. */
export function schemaPath(): string {
  return load().path;
}

let digest: string | undefined;

/**
 * `sha256:` and the hex sha256 of the schema file's exact bytes. Taken from
 * the build's validator index when that was made from a file of the same
 * length and CRC-32: hashing means loading node:crypto, which a verb that
 * calls a plugin otherwise never needs (some 10 ms).
 */
export function schemaDigest(): string {
  digest ??= builtDigest() ?? `sha256:${createHash("sha256").update(load().bytes).digest("hex")}`;
  return digest;
}

function builtDigest(): string | null {
  const index = buildIndex();
  const { bytes } = load();
  if (typeof index?.DIGEST !== "string" || index.SCHEMA_BYTES !== bytes.length) return null;
  const sum = crc32(bytes);
  return sum !== null && index.SCHEMA_CRC32 === sum ? index.DIGEST : null;
}

/** The parsed schema document, for the build step that precompiles it. */
export function schemaDocument(): Loaded["schema"] {
  return load().schema;
}

/** The schema file's exact bytes, as read once for the document and the digest. */
export function schemaBytes(): Buffer {
  return load().bytes;
}

export const AJV_OPTIONS = { strict: true, allErrors: true, verbose: true } as const;

// ajv itself loads only when something must be compiled at run time: a
// process with the build's validators (or only wanting the digest, as the sim
// plugin) never pays for it.
type Ajv = InstanceType<typeof Ajv2020Module.default>;
let ajv: Ajv | undefined;
function newAjv(): Ajv {
  const mod = createRequire(import.meta.url)("ajv/dist/2020.js") as typeof Ajv2020Module;
  return new mod.default(AJV_OPTIONS);
}
const cache = new Map<string, (value: unknown) => Validation>();

interface Precompiled {
  NAMES: string[];
  DIGEST: string;
  SCHEMA_BYTES?: number;
  SCHEMA_CRC32?: number | null;
  [v: string]: unknown;
}
let index: Precompiled | null | undefined;
let precompiled: Precompiled | null | undefined;

/** The build's validator index (build-validators.ts), whatever schema it was made from. */
function buildIndex(): Precompiled | null {
  if (index !== undefined) return index;
  index = null;
  const path = join(dirname(load().path), "..", "dist", "host", "protocol", "validators.cjs");
  if (!existsSync(path)) return null;
  try {
    index = createRequire(import.meta.url)(path) as Precompiled;
  } catch {
    // a damaged build output: compile instead
  }
  return index;
}

/**
 * The validators the build compiled, when they were made from this very
 * schema file; else null, and ajv compiles on first use.
 */
function fromBuild(): Precompiled | null {
  if (precompiled === undefined) {
    precompiled = buildIndex()?.DIGEST === schemaDigest() ? buildIndex() : null;
  }
  return precompiled;
}

/** Where validators come from in this process: the build's module, or ajv at run time. */
export function validatorsSource(): "build" | "ajv" {
  return fromBuild() ? "build" : "ajv";
}

/** ajv's own compile of a def, whatever the build made: the fallback, and the tests' reference. */
export function ajvCompiled(name: string): ValidateFunction | undefined {
  const { schema } = load();
  if (!ajv) {
    ajv = newAjv();
    ajv.addSchema(schema);
  }
  return ajv.getSchema(`${schema.$id}${DEFS}${name}`) as ValidateFunction | undefined;
}

function compiled(name: string): ValidateFunction | undefined {
  const pre = fromBuild();
  if (!pre) return ajvCompiled(name);
  const i = pre.NAMES.indexOf(name);
  if (i === -1) return undefined;
  const path = join(
    dirname(load().path),
    "..",
    "dist",
    "host",
    "protocol",
    "validators",
    `v${i}.cjs`,
  );
  try {
    const mod = createRequire(import.meta.url)(path) as { v?: unknown; DIGEST?: unknown };
    if (mod.DIGEST === pre.DIGEST && typeof mod.v === "function") return mod.v as ValidateFunction;
  } catch {
    // missing or damaged: compile instead
  }
  return ajvCompiled(name);
}

/** A validator for `#/$defs/<defName>`; throws if the schema has no such def. */
export function validator(defName: string): (value: unknown) => Validation {
  const name = defName.startsWith(DEFS) ? defName.slice(DEFS.length) : defName;
  const hit = cache.get(name);
  if (hit) return hit;
  const { schema } = load();
  if (!Object.hasOwn(schema.$defs, name))
    throw new Error(`the protocol schema has no def '${name}'`);
  const fn = compiled(name);
  if (!fn) throw new Error(`the protocol schema has no def '${name}'`);
  const check = (value: unknown): Validation =>
    fn(value) ? { ok: true } : { ok: false, errors: describe(fn.errors ?? []) };
  cache.set(name, check);
  return check;
}

export function validate(defName: string, value: unknown): Validation {
  return validator(defName)(value);
}

/** The def names of a wire method's params and (for a request) result, from `$defs.methods`. */
export function methodDefs(method: string): { params: string; result?: string } | undefined {
  type Entry = { properties: Record<string, { $ref: string }> };
  const index = load().schema.$defs.methods as { properties: Record<string, Entry> };
  if (!Object.hasOwn(index.properties, method)) return undefined;
  const props = index.properties[method]?.properties;
  const params = props?.params?.$ref.slice(DEFS.length);
  if (params === undefined) return undefined;
  const result = props?.result?.$ref.slice(DEFS.length);
  return result === undefined ? { params } : { params, result };
}

/** The wire methods of one seam (`link.exec`, ...), as `$defs.methods` lists them. */
export function seamMethods(seam: string): string[] {
  const index = load().schema.$defs.methods as { properties: Record<string, unknown> };
  return Object.keys(index.properties).filter((m) => m.startsWith(`${seam}.`));
}

// ---- error text

const show = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

function unionMessage(e: ErrorObject): string {
  const branches = (Array.isArray(e.schema) ? e.schema : []) as Record<string, unknown>[];
  if (branches.length > 0 && branches.every((b) => "const" in b)) {
    return `must be one of ${branches.map((b) => show(b.const)).join(", ")}`;
  }
  if (branches.length > 0 && branches.every((b) => Array.isArray(b.required))) {
    return `must have exactly one of ${branches.map((b) => (b.required as string[]).join("+")).join(", ")}`;
  }
  return e.keyword === "oneOf" ? "must match exactly one alternative" : "must match an alternative";
}

function message(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "additionalProperties":
      return `unknown field '${String(p.additionalProperty)}'`;
    case "required":
      return `missing field '${String(p.missingProperty)}'`;
    case "propertyNames":
      return `field name '${String(p.propertyName)}' is not allowed`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map(show).join(", ")}`;
    case "const":
      return `must be ${show(p.allowedValue)}`;
    case "type":
      return `must be ${([] as unknown[]).concat(p.type).join(" or ")}`;
    case "oneOf":
    case "anyOf":
      return unionMessage(e);
    default:
      return e.message ?? e.keyword;
  }
}

const within = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

/**
 * One short line per problem. A failed union speaks for its branches, so the
 * branches' own mismatches are dropped; an if/then reports through its then.
 */
function describe(errors: readonly ErrorObject[]): string[] {
  const unions = errors.filter((e) => e.keyword === "oneOf" || e.keyword === "anyOf");
  const out = new Set<string>();
  for (const e of errors) {
    if (e.keyword === "if" || e.propertyName !== undefined) continue;
    const inBranch = unions.some(
      (u) =>
        u !== e &&
        e.schemaPath.startsWith(`${u.schemaPath}/`) &&
        within(e.instancePath, u.instancePath),
    );
    if (inBranch) continue;
    out.add(`${e.instancePath || "/"}: ${message(e)}`);
  }
  return [...out];
}
