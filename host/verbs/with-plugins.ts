import type { Io } from "../cli/io.js";
import { Supervisor } from "../plugin/supervisor.js";
import { protocolChecks } from "../protocol/checks.js";

/** Runs a verb body with this invocation's plugins, stopping them all at the end, error or not. */
export async function withPlugins<T>(io: Io, body: (sup: Supervisor) => Promise<T>): Promise<T> {
  const sup = new Supervisor(io.ports, protocolChecks());
  try {
    return await body(sup);
  } finally {
    await sup.close();
  }
}
