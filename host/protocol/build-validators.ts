import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import { crc32 } from "../checksum.js";
import { AJV_OPTIONS, schemaBytes, schemaDigest, schemaDocument } from "./schema.js";

// Build step (npm run build): compiles every def of the protocol schema into
// plain validation functions beside this file, so a mu process loads them in
// milliseconds instead of compiling the schema with ajv on each start (about
// half a second). One small module per def: a verb loads the few it checks
// (the handshake's and its calls'), not all of them (800 KB, 40 to 60 ms to
// parse). Every module carries the digest of the schema it was made from;
// schema.ts uses one only while that digest still matches.

const Ajv2020 = Ajv2020Module.default;
const standaloneCode = standaloneModule.default;

const schema = schemaDocument();
const digest = JSON.stringify(schemaDigest());
const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true } });
ajv.addSchema(schema);
const names = Object.keys(schema.$defs);
const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, "validators");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir);
names.forEach((n, i) => {
  const code = standaloneCode(ajv, { v: `${schema.$id}#/$defs/${n}` });
  writeFileSync(join(dir, `v${i}.cjs`), `${code}\nmodule.exports.DIGEST = ${digest};\n`);
});
// The index last: a build cut short leaves no index naming missing modules.
// It also says which file the digest is of (length and CRC-32), so a mu
// process can take the digest from here instead of hashing the schema.
const bytes = schemaBytes();
writeFileSync(
  join(here, "validators.cjs"),
  [
    `module.exports.NAMES = ${JSON.stringify(names)};`,
    `module.exports.DIGEST = ${digest};`,
    `module.exports.SCHEMA_BYTES = ${bytes.length};`,
    `module.exports.SCHEMA_CRC32 = ${JSON.stringify(crc32(bytes))};`,
    "",
  ].join("\n"),
);
