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
    hint: "check that its directory exists or can be created, is yours, is writable and has space",
    cause: err,
  });
}

export function firstLineOf(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0] ?? "";
}
