import { execIn } from "./link-cwd.js";
import { type ExecResult, shown } from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, type Outcome, pass } from "./verdict.js";

// What link.exec does with output a reply line cannot carry as it is: more
// than 1 MiB must be cut and say partial (a whole copy would break the
// line limit, a silent cut hides lost output), and bytes that are not UTF-8
// must come back as valid UTF-8, since the wire carries nothing else.

const LINE = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
/** Past the 1 MiB line limit, so no plugin can send it whole. */
const BIG_LINES = 34_000;
/** Well inside it: whole, or cut and saying so. */
const MID_LINES = 3_200;
const OUTPUT_MS = 30_000;

const printed = (lines: number) => `yes ${LINE.trim()} | head -n ${lines}`;

function judge(r: ExecResult, lines: number): string | undefined {
  const want = LINE.length * lines;
  if (r.exitCode !== 0) return `answered exitCode ${r.exitCode}`;
  if (!LINE.repeat(Math.ceil(r.stdout.length / LINE.length)).startsWith(r.stdout))
    return "came back as other bytes than the script printed";
  if (r.stdout.length < want && !r.partial)
    return `came back cut to ${r.stdout.length} bytes with partial: false`;
  if (r.stdout.length === want && r.partial) return "came back whole with partial: true";
  return undefined;
}

export async function linkOutput(s: Session, place: LinkPlace): Promise<Outcome> {
  const sizes: string[] = [];
  for (const lines of [MID_LINES, BIG_LINES]) {
    const r = await execIn(s, place, printed(lines), ".", OUTPUT_MS);
    const why = judge(r, lines);
    if (why)
      throw new CheckFailed(`${LINE.length * lines} bytes of output ${why}`, [
        shown({ ...r, stdout: `${r.stdout.length} bytes: ${r.stdout.slice(0, 80)}` }),
      ]);
    sizes.push(
      `${LINE.length * lines} bytes ${r.partial ? `cut to ${r.stdout.length} (partial)` : "whole"}`,
    );
  }
  const raw = await execIn(s, place, "printf 'mu-check \\377\\376 \\303 end\\n'", ".");
  if (raw.exitCode !== 0 || !raw.stdout.startsWith("mu-check ") || !raw.stdout.endsWith(" end\n"))
    throw new CheckFailed("output holding bytes that are not UTF-8 did not come back around them", [
      shown(raw),
    ]);
  return pass(
    `${place.label}: ${sizes.join(", ")}; bytes that are not UTF-8 came back as valid UTF-8`,
  );
}
