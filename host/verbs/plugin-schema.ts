import { type Io, printJson } from "../cli/io.js";
import { schemaDigest, schemaPath } from "../protocol/schema.js";

// The schema a plugin's handshake must name, so an author never hashes it by
// hand: the digest is sha256 over the file's exact bytes (no re-encoding, no
// whitespace normalisation), which is what mu compares.

export async function pluginSchema(
  io: Io,
  opts: { digest?: boolean; json?: boolean },
): Promise<void> {
  const digest = schemaDigest();
  if (opts.json) printJson(io, { path: schemaPath(), digest });
  else if (opts.digest) io.out(`${digest}\n`);
  else io.out(`${schemaPath()}\n${digest}\n`);
}
