import { describe, expect, it } from "vitest";
import {
  deleteIntent,
  type Intent,
  intentsFor,
  markResolver,
  writeIntent,
} from "../host/effects/journal.js";
import { realPorts } from "../host/ports/real.js";
import { openStore } from "../host/store/index.js";
import { tempState } from "./helpers.js";

// SQLite gives a new row the id of the newest deleted one. A mu that read an
// intent, then lost the race to settle it, held an id that by then named the
// next start on the same agent, and deleted that intent: the job ran on with
// neither record nor intent (explorer seed 11886). An intent is its id and
// its key together.

const start = (key: string) => ({
  subject: "agent:main/a",
  method: "job.start",
  plugin: "sim",
  key,
  params: { key },
  instance: "sim-1",
  pgid: 0,
  writer: { pid: 1, start: "gone" },
  writtenAt: 0,
});

describe("an intent is known by its id and its key", () => {
  it("leaves the next intent alone when a stale reference shares its reused id", async () => {
    const st = tempState();
    try {
      const store = openStore(realPorts({ PATH: process.env.PATH, ...st.env }));
      await store.write((db) => writeIntent(db, start("job-first")));
      const stale = (await store.read((db) => intentsFor(db, "agent:main/a")))[0] as Intent;
      // Another mu settles the first start and writes the next one.
      await store.write((db) => {
        deleteIntent(db, stale);
        writeIntent(db, start("job-second"));
      });
      const next = (await store.read((db) => intentsFor(db, "agent:main/a")))[0] as Intent;
      expect(next.id).toBe(stale.id);
      // The mu that lost the race acts on what it read.
      await store.write((db) => {
        markResolver(db, stale, { pid: 2, start: "late" });
        deleteIntent(db, stale);
      });
      const left = await store.read((db) => intentsFor(db, "agent:main/a"));
      expect(left.map((i) => i.key)).toEqual(["job-second"]);
      expect(left[0]?.resolver).toBeNull();
    } finally {
      st.done();
    }
  });
});
