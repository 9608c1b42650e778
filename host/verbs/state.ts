import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { openStore } from "../store/index.js";

// What mu owes: for now, every effect whose outcome is still pending, with
// the verb that settles it. Host facts and collects join as their seams land.

interface Notice {
  kind: "pending-effect";
  subject: string;
  method: string;
  key: string;
  since: number;
  next: string;
}

function nextVerb(subject: string): string {
  const [kind, name] = subject.split(":");
  return kind === "host" ? `mu host status ${name}` : `mu ${kind} ${name}`;
}

export async function state(io: Io, opts: { json?: boolean }): Promise<void> {
  const notices = await openStore(io.ports).read((db) =>
    (
      db.exec("SELECT subject, method, key, written_at FROM intents ORDER BY id")[0]?.values ?? []
    ).map(
      ([subject, method, key, at]): Notice => ({
        kind: "pending-effect",
        subject: String(subject),
        method: String(method),
        key: String(key),
        since: Number(at),
        next: nextVerb(String(subject)),
      }),
    ),
  );
  if (opts.json) {
    printJson(io, notices);
    return;
  }
  if (notices.length === 0) {
    io.out("nothing pending\n");
    return;
  }
  for (const n of notices) {
    io.out(
      `pending: ${n.method} for ${n.subject} (key ${n.key}) since ${new Date(n.since).toISOString()}; run: ${n.next}\n`,
    );
  }
}
