import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ReplayPlugin, replayFromWorld } from "./plugin/replay.js";
import { SimPlugin } from "./plugin/serve.js";
import { processIo, SimSession } from "./plugin/sim-io.js";
import { World } from "./plugin/world.js";
import { parseTrace } from "./trace/read.js";

// mu-plugin-sim --world DIR: a real plugin executable whose declaration,
// behaviour and faults come from the simulated world in DIR.
// mu-plugin-sim --replay TRACE [--session N]: plays a plugin process recorded
// in a mu trace (a world whose `replay` holds sessions does the same).

const { values } = parseArgs({
  options: {
    world: { type: "string" },
    replay: { type: "string" },
    session: { type: "string" },
  },
});

function fail(line: string): never {
  process.stderr.write(`mu-plugin-sim: ${line}\n`);
  process.exit(2);
}

/** A trace file named on the command line: its Nth plugin process (default the first). */
function replayFile(file: string): ReplayPlugin {
  let inv: ReturnType<typeof parseTrace>;
  try {
    inv = parseTrace(readFileSync(file, "utf8"), file);
  } catch (err) {
    fail(`cannot replay ${file}: ${(err as Error).message}`);
  }
  const n = values.session ? Number(values.session) : 1;
  const session = inv.sessions[n - 1];
  if (!session) fail(`${file} holds ${inv.sessions.length} plugin process(es), not a number ${n}`);
  const plugin = new ReplayPlugin(session, inv.content, processIo, (dir, msg) =>
    world?.record(dir, msg),
  );
  plugin.start();
  return plugin;
}

if (!values.world && !values.replay) fail("--world DIR or --replay TRACE is required");
const world = values.world ? new World(values.world) : undefined;
process.stdin.setEncoding("utf8");
const replay = values.replay
  ? replayFile(values.replay)
  : world
    ? replayFromWorld(world, processIo)
    : undefined;
if (replay) {
  process.stdin.on("data", (chunk: string) => replay.feed(chunk));
  process.stdin.on("end", () => replay.end());
} else if (world) {
  const sim = new SimPlugin(world, processIo);
  const session = new SimSession(sim, (dir, msg) => world.record(dir, msg), processIo);
  process.stdin.on("data", (chunk: string) => session.feed(chunk));
  process.stdin.on("end", () => session.end());
}
