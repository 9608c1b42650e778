import { basename, isAbsolute } from "node:path";
import { RefusedError, UsageError } from "../errors.js";
import type { FileSystem } from "../ports/types.js";

// Trust is checked at `plugin add` and again before every start: the file a
// registration names can change between the two.

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function checkPluginName(name: string): void {
  if (!NAME.test(name)) {
    throw new UsageError("plugin.name", "usage", `plugin name '${name}' is not valid`, {
      hint: "use 1-63 lowercase letters, digits or '-', starting with a letter or digit",
    });
  }
}

function refuse(rule: string, message: string, hint: string): never {
  throw new RefusedError(`trust.${rule}`, "plugin", message, { hint });
}

/** Throws a RefusedError (exit 4) naming the first trust rule the executable breaks. */
export async function checkTrust(
  fs: FileSystem,
  uid: number,
  name: string,
  path: string,
  /** False while `plugin add` runs: there is nothing registered to re-add yet. */
  registered = true,
): Promise<void> {
  if (!isAbsolute(path)) {
    refuse(
      "absolute",
      `plugin '${name}': path '${path}' is not absolute`,
      "register the absolute path to the executable",
    );
  }
  const want = `mu-plugin-${name}`;
  if (basename(path) !== want) {
    refuse(
      "basename",
      `plugin '${name}': executable '${basename(path)}' must be named '${want}'`,
      `rename or link it as ${want}`,
    );
  }
  const st = await fs.stat(path);
  if (st === null) {
    refuse(
      "exists",
      `plugin '${name}': ${path} does not exist`,
      registered
        ? `put the executable back there, or register where it is now: mu plugin rm ${name}, then mu plugin add ${name} -- <its absolute path> [args]`
        : "check the path: after -- give the executable's absolute path (build or install it first)",
    );
  }
  if (st.type !== "file") {
    refuse(
      "regular",
      `plugin '${name}': ${path} is not a regular file`,
      "register the executable itself",
    );
  }
  if (st.uid !== uid) {
    refuse(
      "owner",
      `plugin '${name}': ${path} is owned by uid ${st.uid}, not by you (uid ${uid})`,
      "install the plugin as your own user",
    );
  }
  if ((st.mode & 0o022) !== 0) {
    const who = st.mode & 0o020 ? "its group" : "everyone";
    refuse(
      "writable",
      `plugin '${name}': ${path} can be written by ${who} (mode ${(st.mode & 0o777).toString(8)})`,
      `run: chmod go-w ${path}`,
    );
  }
}
