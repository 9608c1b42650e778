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

/** The verb that settles a pending effect, as a user would type it. */
function nextVerb(subject: string, method: string, params: Record<string, unknown>): string {
  const [kind, name = ""] = subject.split(":");
  if (kind === "host") return `mu host status ${name}`;
  const [ws, agent] = name.split("/");
  const p = params as {
    msgId?: string;
    target?: { host?: { name?: string } };
    spec?: { firstPrompt?: { msgId: string } };
  };
  if (method === "job.start") {
    const first = p.spec?.firstPrompt?.msgId;
    return first
      ? `mu agent check ${agent} ${first} -w ${ws}`
      : `mu agent spawn ${agent} --host ${p.target?.host?.name ?? "<host>"} -w ${ws}`;
  }
  if (method === "job.stop") return `mu agent close ${agent} -w ${ws}`;
  return p.msgId ? `mu agent check ${agent} ${p.msgId} -w ${ws}` : `mu agent list`;
}

export async function state(io: Io, opts: { json?: boolean }): Promise<void> {
  const notices = await openStore(io.ports).read((db) =>
    (
      db.exec("SELECT subject, method, key, written_at, params FROM intents ORDER BY id")[0]
        ?.values ?? []
    ).map(
      ([subject, method, key, at, params]): Notice => ({
        kind: "pending-effect",
        subject: String(subject),
        method: String(method),
        key: String(key),
        since: Number(at),
        next: nextVerb(String(subject), String(method), JSON.parse(String(params))),
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
