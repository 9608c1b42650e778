import { basename, dirname, join } from "node:path";
import { openStore } from "../../host/store/index.js";
import { vouchPath } from "../../host/store/vouch.js";
import { BESIDE_TEXT, damagedDb } from "../runner/db-damage.js";
import { isArchiveFile, newestSegment, type Observed } from "../runner/expect.js";
import { lockDamage } from "../runner/judge.js";
import { expand, installBytes, type Places } from "../runner/sandbox.js";
import type { DamageStep, ExpectStep, InstallStep, SeedStep } from "../runner/scenario.js";
import { seedRows } from "../runner/seed.js";
import type { VirtualWorld } from "./ports.js";

// The steps that act on mu's state directory or the launchers on the
// virtual disk (seed, install, damage), and what an expect step reads there:
// the DB's bytes, what lies beside it, the retention archive.

/** What a full disk still takes in one write: a lock's few dozen bytes, never a database. */
const FULL_DISK_ROOM = 1024;

/** Applies one such step; a damage of the DB returns the bytes it left, for `db: unchanged`. */
export async function stateDirStep(
  w: VirtualWorld,
  places: Places,
  db: string,
  st: SeedStep | InstallStep | DamageStep,
): Promise<Buffer | undefined> {
  if ("seed" in st) {
    const ports = w.ports();
    await w.clock.run(openStore(ports).write((d) => seedRows(d, st.seed, ports.clock.now())));
    return undefined;
  }
  if ("install" in st) {
    const { as, mode = "0755", kind = "file", owner } = st.install;
    const path = expand(places, `\${bin:${as}}`);
    w.fs.install(path, Number.parseInt(mode, 8), kind, owner, installBytes(st.install));
    return undefined;
  }
  // pid 1 never exits on the virtual engine, as init on a real machine.
  const lock = lockDamage(st.damage, { pid: 1, start: w.processes.startOf(1) ?? "" });
  if (lock) {
    const path = `${db}${lock.file}`;
    if (lock.text === null) w.fs.removeFromOutside(path);
    else w.fs.overwrite(path, Buffer.from(lock.text));
    return undefined;
  }
  if (st.damage.beside !== undefined) {
    w.fs.overwrite(join(dirname(db), st.damage.beside), Buffer.from(BESIDE_TEXT));
    return undefined;
  }
  if (st.damage.disk === "full") {
    w.fs.room = FULL_DISK_ROOM;
    return undefined;
  }
  if (st.damage.checked === "removed") {
    w.fs.removeFromOutside(vouchPath(db));
    return undefined;
  }
  if (st.damage.stateDir === "file") {
    if (w.fs.peekDir(dirname(db)).length > 0 || w.fs.peekIsDir(dirname(db)))
      throw new Error("damage state dir: mu has made it already");
    w.fs.overwrite(dirname(db), new Uint8Array());
    return undefined;
  }
  const { archive, db: file, checked } = st.damage;
  if (archive === "directory" || file === "directory" || checked === "directory") {
    w.fs.replaceByDirectory(
      file === "directory"
        ? db
        : checked === "directory"
          ? vouchPath(db)
          : join(dirname(db), newestSegment(basename(db), w.fs.peekDir(dirname(db)))),
    );
    return undefined;
  }
  const noise = (n: number) => Buffer.from(w.ports().random.hex(n), "hex");
  const bytes = await damagedDb(Buffer.from(w.fs.peek(db) ?? []), st.damage, noise);
  w.fs.overwrite(db, bytes);
  return bytes;
}

/** What an expect step reads of the state directory, as the real engine reads its files. */
export function stateDirReads(w: VirtualWorld, db: string): Pick<Observed, "archive" | "db"> {
  return {
    archive: () =>
      w.fs
        .peekDir(dirname(db))
        .filter((f) => isArchiveFile(basename(db), f))
        .map((name) => ({
          name,
          bytes: w.fs.peekIsDir(join(dirname(db), name))
            ? null
            : (w.fs.peek(join(dirname(db), name)) ?? new Uint8Array()),
        })),
    db: () => w.fs.peek(db),
  };
}

/** The expect step's checks on the DB file itself and on what lies beside it. */
export function stateDirProblems(
  w: VirtualWorld,
  db: string,
  want: ExpectStep["expect"],
  snapshot: Buffer | undefined,
): string[] {
  const problems: string[] = [];
  const now = want.db === "unchanged" ? Buffer.from(w.fs.peek(db) ?? []) : undefined;
  if (now && !snapshot) problems.push("no damage snapshot to compare with");
  else if (now && snapshot && !now.equals(snapshot)) problems.push("the DB file changed");
  // The same check as the real engine's: nothing beside the DB in mu's state directory.
  if (want.leftoverFiles === "none") {
    const mine = [basename(db), basename(vouchPath(db))]; // the DB and its commit's note
    const extra = w.fs.peekDir(dirname(db)).filter((f) => !mine.includes(f));
    if (extra.length > 0) problems.push(`left beside the DB: ${extra.join(", ")}`);
  }
  return problems;
}
