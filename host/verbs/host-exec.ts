import type { Io } from "../cli/io.js";
import { UsageError } from "../errors.js";
import { linkRun, loadLinkHost, openLink, timeoutOption } from "../seams/link.js";
import { withPlugins } from "./with-plugins.js";

// Run one POSIX sh script on a host through its plugin's link, for using and
// debugging a plugin host by hand. The script's own exit code is mu's.

/** What `mu host exec` exits with when the script timed out, as timeout(1) does. */
export const EXEC_TIMED_OUT = 124;

export async function hostExec(
  io: Io,
  name: string,
  words: string[],
  opts: { timeout?: string },
): Promise<number> {
  const timeoutMs = timeoutOption(opts.timeout, "exec");
  const script = words.join(" ");
  const h = await loadLinkHost(io, name);
  return withPlugins(io, async (sup) => {
    const l = await openLink(io, sup, name, h);
    // Checked here, not by the plugin: a script that does not fit is never sent.
    const bytes = Buffer.byteLength(script, "utf8");
    if (bytes > l.link.maxScriptBytes) {
      throw new UsageError(
        "host.exec.too-big",
        "usage",
        `the script is ${bytes} bytes; '${h.reg.name}' takes at most ${l.link.maxScriptBytes}`,
        { hint: "copy a file over and run that instead" },
      );
    }
    const r = await linkRun(l, "link.exec", { script, cwd: "." }, timeoutMs);
    io.out(r.stdout);
    io.err(r.stderr);
    if (r.partial) io.err(`mu: host: the output of the script on ${name} was cut by the plugin\n`);
    if (r.exitCode !== null) return r.exitCode;
    const after =
      l.link.remoteOnTimeout === "unknown"
        ? `it may still be running on ${name}`
        : "nothing it started still runs";
    io.err(`mu: host: the script timed out after ${timeoutMs} ms; ${after}\n`);
    return EXEC_TIMED_OUT;
  });
}
