import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { realLiveness, realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { vouchPath } from "../../host/store/vouch.js";
import { BESIDE_TEXT, damagedDb } from "./db-damage.js";
import { isArchiveFile, newestSegment, type Observed } from "./expect.js";
import { lockDamage } from "./judge.js";
import type { Sandbox } from "./sandbox.js";
import type { DamageStep, ExpectStep, SeedStep } from "./scenario.js";
import { seedRows } from "./seed.js";

// The real engine's steps on mu's state directory (damage, seed) and what an
// expect step reads there: the DB's bytes, what lies beside it, the
// retention archive.

export async function damage(box: Sandbox, what: DamageStep["damage"]): Promise<void> {
  // The runner itself lives through the whole scenario: a holder that stays alive.
  const lock = lockDamage(what, realLiveness.self());
  if (lock) {
    const path = `${box.db}${lock.file}`;
    if (lock.text === null) rmSync(path, { force: true });
    else writeFileSync(path, lock.text);
    return;
  }
  if (what.beside !== undefined) {
    mkdirSync(box.state, { recursive: true });
    writeFileSync(join(box.state, what.beside), BESIDE_TEXT);
    return;
  }
  if (what.disk === "full") throw new Error("damage disk: full is the virtual engine's only");
  if (what.checked === "removed") {
    rmSync(vouchPath(box.db), { force: true });
    return;
  }
  if (what.stateDir === "file") {
    if (existsSync(box.state)) throw new Error("damage state dir: mu has made it already");
    writeFileSync(box.state, "");
    return;
  }
  if (what.archive === "directory" || what.db === "directory" || what.checked === "directory") {
    const path =
      what.db === "directory"
        ? box.db
        : what.checked === "directory"
          ? vouchPath(box.db)
          : join(box.state, newestSegment(basename(box.db), readdirSync(box.state)));
    rmSync(path);
    mkdirSync(path);
    writeFileSync(join(path, "in-the-way"), "");
    return;
  }
  mkdirSync(box.state, { recursive: true });
  const next = await damagedDb(existsSync(box.db) ? readFileSync(box.db) : Buffer.alloc(0), what);
  writeFileSync(box.db, next);
  box.snapshot = Buffer.from(next);
}

/** Writes a long history through mu's own store, at mu's clock. */
export async function seed(box: Sandbox, what: SeedStep["seed"]): Promise<void> {
  await openStore(realPorts({ MU_DB_PATH: box.db, ...box.env })).write((db) =>
    seedRows(db, what, Date.now() + Number(box.env.MU_CLOCK_OFFSET_MS ?? 0)),
  );
}

/** The expect step's checks on the DB file itself and on what lies beside it. */
export function stateDirProblems(box: Sandbox, want: ExpectStep["expect"]): string[] {
  const problems: string[] = [];
  if (want.db === "unchanged") {
    if (!box.snapshot) problems.push("no damage snapshot to compare with");
    else if (!readFileSync(box.db).equals(box.snapshot)) problems.push("the DB file changed");
  }
  if (want.leftoverFiles === "none") {
    // The DB and its commit's note are mu's; anything else is left over.
    const mine = [basename(box.db), basename(vouchPath(box.db))];
    const extra = (existsSync(box.state) ? readdirSync(box.state) : []).filter(
      (f) => !mine.includes(f),
    );
    if (extra.length > 0) problems.push(`left beside the DB: ${extra.join(", ")}`);
  }
  return problems;
}

/** What an expect step reads of the state directory. */
export function stateDirReads(box: Sandbox): Pick<Observed, "archive" | "db"> {
  return {
    archive: () =>
      (existsSync(box.state) ? readdirSync(box.state) : [])
        .filter((f) => isArchiveFile(basename(box.db), f))
        .map((name) => {
          const path = join(box.state, name);
          return { name, bytes: statSync(path).isDirectory() ? null : readFileSync(path) };
        }),
    db: () => (existsSync(box.db) ? readFileSync(box.db) : null),
  };
}
