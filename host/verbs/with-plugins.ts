import type { Io } from "../cli/io.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import { Supervisor } from "../plugin/supervisor.js";
import { protocolChecks } from "../protocol/checks.js";

/** Runs a verb body with this invocation's plugins, stopping them all at the end, error or not. */
export async function withPlugins<T>(io: Io, body: (sup: Supervisor) => Promise<T>): Promise<T> {
  const sup = new Supervisor(io.ports, protocolChecks());
  try {
    return await body(sup);
  } finally {
    await sup.close();
    // The verb's outcome stands; the line tells why it took a grace longer,
    // and whose bug that is.
    const forced = new Set(sup.stops.filter((s) => s.record.forced).map((s) => s.name));
    for (const name of forced)
      io.err(
        `mu: plugin: '${name}' was still running ${GRACE_MS / 1000} s after mu told it to stop, so mu killed its process group: fix the plugin (it must exit on shutdown or when its stdin closes)\n`,
      );
  }
}
