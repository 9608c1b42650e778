import { homedir } from "node:os";
import { join } from "node:path";

/** $MU_DB_PATH, else $MU_STATE_DIR/mu.db, else ~/.local/state/mu/mu.db. */
export function dbPath(env: Readonly<Record<string, string | undefined>>): string {
  // Under the test runner, a test that forgot its temp state would write the
  // developer's real DB; refuse instead.
  if (process.env.VITEST && !env.MU_DB_PATH && !env.MU_STATE_DIR) {
    throw new Error(
      "refusing the real mu database under a test run: set MU_STATE_DIR or MU_DB_PATH",
    );
  }
  if (env.MU_DB_PATH) return env.MU_DB_PATH;
  if (env.MU_STATE_DIR) return join(env.MU_STATE_DIR, "mu.db");
  return join(env.HOME || homedir(), ".local", "state", "mu", "mu.db");
}
