import type { Database } from "sql.js";
import type { Intent } from "../effects/journal.js";
import { shWord } from "../sh-quote.js";

// A message the channel's exact receipt proved it never took, and that mu
// could not safely send again itself: its receipt says not-accepted, and
// the text stays with it so the user can send it again.

const splitSubject = (subject: string) => {
  const [ws = "", name = ""] = subject.slice("agent:".length).split("/");
  return { ws, name };
};

/** The verb that sends the same message again, under a new msgId. */
export function sendAgainVerb(
  ws: string,
  name: string,
  method: string,
  params: Record<string, unknown>,
): string | undefined {
  if (typeof params.text !== "string") return undefined;
  const text = shWord(params.text);
  const who = `${shWord(name)} -w ${shWord(ws)}`;
  if (method === "channel.interrupt") return `mu agent interrupt ${who} ${text}`;
  if (method === "channel.fresh") return `mu agent send ${who} --fresh ${text}`;
  if (method !== "channel.send") return undefined;
  return `mu agent send ${who}${params.mode === "steer" ? " --steer" : ""} ${text}`;
}

export function recordUndelivered(db: Database, i: Intent, now: number): void {
  const { ws, name } = splitSubject(i.subject);
  const created = db.exec("SELECT created_at FROM receipts WHERE msg_id = ?", [i.key])[0]
    ?.values[0]?.[0];
  db.run(
    "INSERT OR REPLACE INTO receipts (msg_id, workstream, agent, state, created_at, text) VALUES (?, ?, ?, 'not-accepted', ?, ?)",
    [
      i.key,
      ws,
      name,
      created === undefined ? now : Number(created),
      typeof i.params.text === "string" ? i.params.text : null,
    ],
  );
}

export function undeliveredLine(i: Intent): string | undefined {
  const { ws, name } = splitSubject(i.subject);
  const again = sendAgainVerb(ws, name, i.method, i.params);
  return again
    ? `not delivered: the channel never took ${i.key} to ${ws}/${name}; nothing was resent; send it again: ${again}`
    : undefined;
}

/** The verb that sends a message mu settled as never delivered again, if mu kept its text. */
export function undeliveredAgain(db: Database, msgId: string): string | undefined {
  const row = db.exec(
    "SELECT workstream, agent, text FROM receipts WHERE msg_id = ? AND state = 'not-accepted'",
    [msgId],
  )[0]?.values[0];
  if (!row || row[2] === null) return undefined;
  return sendAgainVerb(String(row[0]), String(row[1]), "channel.send", { text: String(row[2]) });
}
