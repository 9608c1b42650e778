import type { Database } from "sql.js";
import type { SeedStep } from "./scenario.js";

// A seed step's rows, written by one commit of mu's own store on either
// engine, so they follow mu's schema and the commit runs as any other does.

export function seedRows(db: Database, seed: SeedStep["seed"], now: number): void {
  const rec = db.prepare(
    "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'main', ?, 'accepted', ?)",
  );
  for (let k = 0; k < seed.receipts; k++) rec.run([`msg-seed${k}`, seed.agent, now]);
  rec.free();
}
