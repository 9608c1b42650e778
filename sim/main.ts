import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ReplayPlugin } from "./plugin/replay.js";
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

function replaySession(world: World | undefined) {
  const config = world?.config();
  let sessions = config?.replay?.sessions;
  let content = config?.replay?.content ?? false;
  if (values.replay) {
    let inv: ReturnType<typeof parseTrace>;
    try {
      inv = parseTrace(readFileSync(values.replay, "utf8"), values.replay);
    } catch (err) {
      fail(`cannot replay ${values.replay}: ${(err as Error).message}`);
    }
    sessions = inv.sessions;
    content = inv.content;
  }
  if (!sessions) return undefined;
  // Each process of the plugin plays the next recorded one, unless told which.
  let n = values.session ? Number(values.session) : 1;
  if (!values.session && world)
    world.update((s) => {
      s.replayed = (s.replayed ?? 0) + 1;
      n = s.replayed;
    });
  const session = sessions[n - 1];
  if (!session) fail(`the trace holds ${sessions.length} plugin process(es), not a number ${n}`);
  return { session, content };
}

if (!values.world && !values.replay) fail("--world DIR or --replay TRACE is required");
const world = values.world ? new World(values.world) : undefined;
const replay = replaySession(world);
process.stdin.setEncoding("utf8");
if (replay) {
  const plugin = new ReplayPlugin(replay.session, replay.content, processIo, (dir, msg) =>
    world?.record(dir, msg),
  );
  process.stdin.on("data", (chunk: string) => plugin.feed(chunk));
  process.stdin.on("end", () => plugin.end());
  plugin.start();
} else if (world) {
  const sim = new SimPlugin(world, processIo);
  const session = new SimSession(sim, (dir, msg) => world.record(dir, msg), processIo);
  process.stdin.on("data", (chunk: string) => session.feed(chunk));
  process.stdin.on("end", () => session.end());
}
