import { MuError, UnavailableError } from "../errors.js";

// Every way the store can fail, as the one line mu prints and exit 5: the
// database or its lock is substrate, and none of these is the user's typo.

export function corrupt(path: string, why: string): UnavailableError {
  return new UnavailableError(
    "store.corrupt",
    "store",
    `${path} is not a valid mu database (truncated or corrupt: ${why})`,
    { hint: "move it aside or restore it from a backup; mu will not overwrite it" },
  );
}

export function foreign(path: string, why: string): UnavailableError {
  return new UnavailableError(
    "store.foreign",
    "store",
    `${path} is an SQLite database, but not mu's (${why})`,
    { hint: "point MU_DB_PATH or MU_STATE_DIR elsewhere; mu leaves this file as it is" },
  );
}

export function newer(path: string, found: number, known: number): UnavailableError {
  return new UnavailableError(
    "store.newer",
    "store",
    `database ${path} was written by a newer mu (schema ${found}, this mu knows ${known})`,
    { hint: "upgrade mu; it never migrates a database backwards" },
  );
}

export function migrationFailed(path: string, version: number, err: unknown): UnavailableError {
  return new UnavailableError(
    "store.migrate",
    "store",
    `cannot bring ${path} to schema ${version}: ${firstLineOf(err)}`,
    { hint: "the file was left as it was; move it aside or restore it", cause: err },
  );
}

export function locked(lockPath: string, holder: number | null, waitedMs: number) {
  const who = holder === null ? "another mu" : `pid ${holder}`;
  return new UnavailableError(
    "store.locked",
    "store",
    `the database lock ${lockPath} is held by ${who} (waited ${waitedMs} ms)`,
    { hint: "let that mu finish and retry, or raise MU_LOCK_TIMEOUT_MS" },
  );
}

/** A filesystem failure (permissions, a full or read-only disk) as one line. */
export function ioFailure(path: string, err: unknown, doing: "read" | "write" = "write"): unknown {
  if (err instanceof MuError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return err;
  return new UnavailableError("store.io", "store", `cannot ${doing} ${path} (${code})`, {
    hint:
      IO_HINTS.get(code) ??
      "check that its directory exists or can be created, is yours, is writable and has space",
    cause: err,
  });
}

// The common causes each have one thing to do; the rest get the checklist.
const IO_HINTS = new Map<string, string>([
  [
    "EISDIR",
    "a directory stands where the file should be; move it aside, or point MU_DB_PATH elsewhere",
  ],
  [
    "ENOTDIR",
    "a file stands where one of its directories should be; move it aside, or point MU_STATE_DIR elsewhere",
  ],
  ["ENOSPC", "its disk is full; free some space and retry"],
  ["EDQUOT", "your disk quota is used up; free some space and retry"],
  [
    "EACCES",
    "you may not use it or its directory; fix their permissions, or point MU_STATE_DIR elsewhere",
  ],
  [
    "EPERM",
    "you may not use it or its directory; fix their permissions, or point MU_STATE_DIR elsewhere",
  ],
  ["EROFS", "its file system is read-only; point MU_STATE_DIR at a writable one"],
]);

export function firstLineOf(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0] ?? "";
}
