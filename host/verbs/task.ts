import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { RefusedError } from "../errors.js";
import { checkName } from "../names.js";
import { openStore } from "../store/index.js";

// Tasks are minimal on purpose: enough for `mu agent spawn --task` to claim
// one and journal its first delivery. They are not a tracker.

export async function taskAdd(io: Io, id: string): Promise<void> {
  checkName("task id", id, "task.id");
  const now = io.ports.clock.now();
  await openStore(io.ports).write((db) => {
    const exists = db.exec("SELECT 1 FROM tasks WHERE id = ?", [id]).length > 0;
    if (exists) {
      throw new RefusedError("task.exists", "task", `task '${id}' already exists`, {
        hint: "pick another id, or see: mu task list",
      });
    }
    db.run("INSERT INTO tasks (id, state, claimed_by, created_at) VALUES (?, 'open', NULL, ?)", [
      id,
      now,
    ]);
  });
  io.out(`${id}\n`);
}

interface TaskRow {
  id: string;
  state: string;
  claimedBy: string | null;
  createdAt: number;
}

export async function taskList(io: Io, opts: { json?: boolean }): Promise<void> {
  const rows = await openStore(io.ports).read((db) => {
    const res = db.exec(
      "SELECT id, state, claimed_by, created_at FROM tasks ORDER BY created_at, id",
    );
    return (res[0]?.values ?? []).map(
      ([id, state, claimed, created]): TaskRow => ({
        id: String(id),
        state: String(state),
        claimedBy: claimed === null ? null : String(claimed),
        createdAt: Number(created),
      }),
    );
  });
  if (opts.json) {
    printJson(io, rows);
    return;
  }
  if (rows.length === 0) {
    io.out("no tasks; add one with: mu task add <id>\n");
    return;
  }
  for (const r of rows) io.out(`${r.id}\t${r.state}${r.claimedBy ? `\t${r.claimedBy}` : ""}\n`);
}
