import { homedir } from "node:os";
import { join } from "node:path";

type Env = Readonly<Record<string, string | undefined>>;

const defaultUnder = (home: string) => join(home, ".local", "state", "mu", "mu.db");

/** $MU_DB_PATH, else $MU_STATE_DIR/mu.db, else ~/.local/state/mu/mu.db. */
export function dbPath(env: Env): string {
  if (env.MU_DB_PATH) return env.MU_DB_PATH;
  if (env.MU_STATE_DIR) return join(env.MU_STATE_DIR, "mu.db");
  const path = defaultUnder(env.HOME || homedir());
  // A test that forgot its temp state would otherwise write the developer's
  // own database. Only the real default is refused, so the order above stays
  // testable with a made-up HOME.
  if (process.env.VITEST && path === defaultUnder(homedir())) {
    throw new Error(
      `refusing the real mu database ${path} under a test run: set MU_STATE_DIR or MU_DB_PATH`,
    );
  }
  return path;
}
