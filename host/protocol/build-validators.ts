import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import { AJV_OPTIONS, schemaDigest, schemaDocument } from "./schema.js";

// Build step (npm run build): compiles every def of the protocol schema into
// one module of plain validation functions beside this file, so a mu process
// loads them in milliseconds instead of compiling the schema with ajv on each
// start (about half a second). The module carries the digest of the schema it
// was made from; schema.ts uses it only while that digest still matches.

const Ajv2020 = Ajv2020Module.default;
const standaloneCode = standaloneModule.default;

const schema = schemaDocument();
const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true } });
ajv.addSchema(schema);
const names = Object.keys(schema.$defs);
// Export names must be identifiers; the defs' names have dots.
const refs = Object.fromEntries(names.map((n, i) => [`v${i}`, `${schema.$id}#/$defs/${n}`]));
const code = [
  standaloneCode(ajv, refs),
  `module.exports.NAMES = ${JSON.stringify(names)};`,
  `module.exports.DIGEST = ${JSON.stringify(schemaDigest())};`,
  "",
].join("\n");
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), "validators.cjs"), code);
