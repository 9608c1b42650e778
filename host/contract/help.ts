import { CHECK_IDS } from "./verdict.js";

// `mu plugin check --help` after the options: the checks by seam, read from
// the suite's own list so a new check is listed the day it is added.

const SEAMS = ["link", "host", "job", "channel"] as const;
const WHEN: Record<(typeof SEAMS)[number], string> = {
  link: "",
  host: " (with --seam host)",
  job: " (with --seam job)",
  channel: " (with --seam channel)",
};

/** Lines of at most 76 columns, the names after a label column. */
function wrapped(label: string, names: readonly string[], tail: string): string[] {
  const pad = " ".repeat(14);
  const lines: string[] = [];
  let at = `  ${label.padEnd(12)}`;
  const words = `${names.join(", ")}${tail}`.split(" ");
  for (const w of words) {
    if (at.length + w.length + 1 > 76 && at.trim() !== label) {
      lines.push(at.trimEnd());
      at = pad;
    }
    at += at.endsWith(" ") ? w : ` ${w}`;
  }
  lines.push(at.trimEnd());
  return lines;
}

export function checkHelp(): string {
  const seamOf = (id: string) => SEAMS.find((s) => id.startsWith(`${s}.`));
  const firstSeam = CHECK_IDS.findIndex((id) => seamOf(id) !== undefined);
  const before = CHECK_IDS.slice(0, firstSeam).filter((id) => !seamOf(id));
  const after = CHECK_IDS.slice(firstSeam).filter((id) => !seamOf(id));
  const rows = [
    ...wrapped("any plugin", before, `; after the rest: ${after.join(", ")}`),
    ...SEAMS.flatMap((s) =>
      wrapped(
        s,
        CHECK_IDS.filter((id) => seamOf(id) === s),
        WHEN[s],
      ),
    ),
  ];
  return `
Checks, in this order (each skipped, saying why, where the declaration or
the seams named leave it out):
${rows.join("\n")}
The replay checks ask each question of a new plugin process, the one that
made the effect killed, as after a crash of mu. Every passing line says
what it exercised and, where the declaration left something out, what not.

--seam host, job or channel runs that seam's checks, which acquire real
machines or start real jobs; --param passes host.acquire's params (and
harness and cmd for job.start) as a user's --param would; --host aims the
link checks at a host mu already knows instead; --repeat sets the rounds of
host.idempotency and job.idempotency (a replay check runs once).

After the count, not run:, not exercised: and never checked: lines say
what the run did not prove for this declaration. The run removes what it
made: every machine is released, every job stopped, and what its names
left on the backend is removed through link.exec; a cleaned: line says
what was removed, and a left: line names what could not be, with the
command that removes it.

Exit codes: 0 nothing failed, 4 a check failed, 2 a usage error, 3 no such
plugin or host. What each check proves: docs/plugin-check.md; the promises
behind them: docs/protocol.md.`;
}
