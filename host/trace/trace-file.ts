import { mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

// The trace's one door to the disk and the clock. Every record is written
// synchronously as it happens, so a mu that dies by SIGKILL at a crash
// point leaves every record up to that instant; and times are monotonic,
// since a replay needs the gaps between lines, not the wall clock.

export interface TraceSink {
  write(record: Record<string, unknown>): void;
  /** Milliseconds since the trace began, monotonic. */
  now(): number;
  readonly path: string;
}

/** One new file in dir per invocation; throws (with the OS's code) when it cannot be made. */
export function openTraceFile(dir: string): TraceSink {
  // Not recursive: node's recursive mkdir never returns under /proc.
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as { code?: unknown }).code !== "EEXIST") throw err;
  }
  const path = join(dir, `mu-${Date.now()}-${process.pid}.ndjson`);
  const fd = openSync(path, "wx", 0o600);
  const t0 = process.hrtime.bigint();
  let broken = false;
  return {
    path,
    now: () => Math.round(Number(process.hrtime.bigint() - t0) / 1e3) / 1e3,
    write(record) {
      if (broken) return;
      try {
        writeSync(fd, `${JSON.stringify(record)}\n`);
      } catch {
        // A full disk must not change what mu does: the trace just ends.
        broken = true;
      }
    },
  };
}
