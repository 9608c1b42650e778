import { resolve } from "node:path";
import type { Io } from "../cli/io.js";
import { UsageError } from "../errors.js";
import { MAX_LINE_BYTES } from "../plugin/framing.js";
import { linkRun, loadLinkHost, openLink } from "../seams/link.js";
import { type LinkTimeout, timeoutOption } from "../seams/link-timeout.js";
import { withPlugins } from "./with-plugins.js";

// Run one POSIX sh script on a host through its plugin's link, for using and
// debugging a plugin host by hand. The script's own exit code is mu's.

/**
 * The most script bytes mu reads before it knows the plugin's own limit: a
 * request must fit one line of the transport, so no plugin is ever sent more.
 */
const SCRIPT_READ_MAX = MAX_LINE_BYTES;

/** What `mu host exec` exits with when the script timed out, as timeout(1) does. */
export const EXEC_TIMED_OUT = 124;

export async function hostExec(
  io: Io,
  name: string,
  words: string[],
  opts: ExecOptions,
): Promise<number> {
  const timeoutMs = timeoutOption(opts, "exec", io);
  const script = await readScript(io, words, opts.file, name);
  const cwd = opts.cwd ?? ".";
  if (cwd === "" || cwd.includes("\0")) {
    throw new UsageError("host.exec.cwd", "usage", `--cwd '${cwd}' is not a directory name`, {
      hint: "give a path on the host, relative to its login directory or absolute",
    });
  }
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
        {
          hint: `commit it, 'mu host push ${name}' it, and run it there with a short script`,
        },
      );
    }
    const r = await linkRun(l, "link.exec", { script, cwd }, timeoutMs);
    io.out(r.stdout);
    io.err(r.stderr);
    for (const line of replaced(r, name)) io.err(line);
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

/**
 * A plugin answers in JSON text, so output bytes that were not UTF-8 reach
 * mu already replaced by U+FFFD: mu cannot restore them, but says so rather
 * than pass the changed output off as the script's.
 */
function replaced(r: { stdout: string; stderr: string }, host: string): string[] {
  const lines: string[] = [];
  for (const which of ["stdout", "stderr"] as const) {
    const n = r[which].split("\uFFFD").length - 1;
    if (n === 0) continue;
    lines.push(
      `mu: host: the script's ${which} on ${host} came back with ${n} U+FFFD replacement character${n === 1 ? "" : "s"}, where the plugin met bytes that were not UTF-8; pipe binary output through base64 to get it whole\n`,
    );
  }
  return lines;
}

export interface ExecOptions extends LinkTimeout {
  file?: string;
  cwd?: string;
}

/**
 * The script comes from the words or from --file (`-` is stdin), never both:
 * a file is the way round the kernel's limit on one argv word.
 */
async function readScript(
  io: Io,
  words: string[],
  given: string | undefined,
  host: string,
): Promise<string> {
  // A lone `-` for the script is stdin too, as for most Unix tools: sh has no
  // command named `-`, so nothing meaningful is lost.
  const fromStdin = given === undefined && words.length === 1 && words[0] === "-";
  const file = fromStdin ? "-" : given;
  if (file === undefined) {
    if (words.length === 0) {
      throw new UsageError("host.exec.no-script", "usage", "no script given", {
        hint: "put it after --, or use --file PATH (- or --file - reads stdin)",
      });
    }
    return words.join(" ");
  }
  if (words.length > 0 && !fromStdin) {
    throw new UsageError("host.exec.two-scripts", "usage", "both --file and script words given", {
      hint: "use one of them",
    });
  }
  // One byte past the most mu can ever send tells "too big" from "fits"
  // without holding more: the file may be endless (/dev/zero, a pipe).
  const source = file === "-" ? "stdin" : `--file ${file}`;
  let bytes: Uint8Array | null;
  try {
    bytes =
      file === "-"
        ? await readStdin(SCRIPT_READ_MAX + 1)
        : await io.ports.fs.readHead(resolve(io.ports.cwd, file), SCRIPT_READ_MAX + 1);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new UsageError("host.exec.file", "usage", `cannot read ${source} (${code})`, {
      hint: "give a readable file, or - for stdin",
    });
  }
  if (bytes === null) {
    throw new UsageError("host.exec.file", "usage", `--file ${file} does not exist`, {
      hint: "check the path",
    });
  }
  if (bytes.length > SCRIPT_READ_MAX) {
    throw new UsageError(
      "host.exec.too-big",
      "usage",
      `${source} holds more than ${SCRIPT_READ_MAX} bytes, the most a script sent to a plugin can be`,
      { hint: `commit it, 'mu host push ${host}' it, and run it there with a short script` },
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    // The script travels as JSON text: bytes that are not UTF-8 would arrive changed.
    throw new UsageError("host.exec.file", "usage", `${source} is not UTF-8 text`, {
      hint: "convert it to UTF-8",
    });
  }
}

/**
 * Stdin up to `max` bytes: read as a stream, since a pipe from another
 * process may be a socket, and left unread past that.
 */
async function readStdin(max: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    total += (chunk as Buffer).length;
    if (total >= max) break;
  }
  return Buffer.concat(chunks).subarray(0, max);
}
