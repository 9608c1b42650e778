import type { Io } from "../cli/io.js";
import { RefusedError, UsageError } from "../errors.js";
import { findLinkHost, sameInstance } from "../hosts/link-host.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import { callPlugin } from "../seams/call.js";
import { openStore } from "../store/index.js";
import { withPlugins } from "./with-plugins.js";

// Run one POSIX sh script on a host through its plugin's link, for using and
// debugging a plugin host by hand. The script's own exit code is mu's.

export const DEFAULT_EXEC_TIMEOUT_MS = 20_000;
/** What `mu host exec` exits with when the script timed out, as timeout(1) does. */
export const EXEC_TIMED_OUT = 124;

interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export async function hostExec(
  io: Io,
  name: string,
  words: string[],
  opts: { timeout?: string },
): Promise<number> {
  const timeoutMs = opts.timeout === undefined ? DEFAULT_EXEC_TIMEOUT_MS : Number(opts.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new UsageError(
      "host.exec.timeout",
      "usage",
      `--timeout '${opts.timeout}' is not a whole number of milliseconds`,
    );
  }
  const script = words.join(" ");
  const h = await openStore(io.ports).read((db) => findLinkHost(db, name));
  if (h.provider && h.provider.state !== "ready") {
    throw new RefusedError("host.not-ready", "host", `host '${name}' is ${h.provider.state}`, {
      hint: `see: mu host status ${name}`,
    });
  }
  return withPlugins(io, async (sup) => {
    const { hello } = await sup.ready(h.reg, ["link"]);
    const link = hello.seams.link;
    if (!link)
      throw new RefusedError("load.seam.missing", "plugin", `'${h.reg.name}' declares no link`);
    sameInstance(name, h.reg.name, h.instance, hello.instance);
    // Checked here, not by the plugin: a script that does not fit is never sent.
    const bytes = Buffer.byteLength(script, "utf8");
    if (bytes > link.maxScriptBytes) {
      throw new UsageError(
        "host.exec.too-big",
        "usage",
        `the script is ${bytes} bytes; '${h.reg.name}' takes at most ${link.maxScriptBytes}`,
        {
          hint: "copy a file over and run that instead",
        },
      );
    }
    const r = (await callPlugin(sup, io.ports.clock, h.reg, {
      method: "link.exec",
      params: { target: h.target, script, cwd: ".", timeoutMs },
      // The plugin enforces timeoutMs; mu waits one grace more for its answer.
      timeoutMs: timeoutMs + GRACE_MS,
      effect: false,
    })) as ExecResult;
    io.out(r.stdout);
    io.err(r.stderr);
    if (r.partial) io.err(`mu: host: the output of the script on ${name} was cut by the plugin\n`);
    if (r.exitCode !== null) return r.exitCode;
    if (link.remoteOnTimeout === "stopping") await io.ports.clock.sleep(GRACE_MS);
    const after =
      link.remoteOnTimeout === "unknown"
        ? `it may still be running on ${name}`
        : "nothing it started still runs";
    io.err(`mu: host: the script timed out after ${timeoutMs} ms; ${after}\n`);
    return EXEC_TIMED_OUT;
  });
}
