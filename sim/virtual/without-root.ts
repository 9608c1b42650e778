import type { VirtualOutcome } from "./outcome.js";

/**
 * The run's temp directory, named by placeholder where mu printed or sent
 * it (a checkout's path, a fetch place's): it differs from run to run, and a
 * seed's run must read the same every time.
 */
export function withoutRoot(o: VirtualOutcome, root: string): VirtualOutcome {
  if (!o.ran) return o;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the runner's own placeholder
  const name = (t: string) => t.replaceAll(root, "${root}");
  // In mu's database (a checkout's path in a job's record) the same length
  // over, so the bytes around it stay where they were.
  const db = o.dbBytes && Buffer.from(o.dbBytes);
  const path = Buffer.from(root);
  for (let at = db ? db.indexOf(path) : -1; db && at >= 0; at = db.indexOf(path, at))
    db.fill("#", at, at + path.length);
  return {
    ...o,
    sent: name(o.sent),
    output: name(o.output),
    stdouts: o.stdouts.map(name),
    stderrs: o.stderrs.map(name),
    dbBytes: db ?? o.dbBytes,
  };
}
