import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { worldProblem } from "./plugin/check-world.js";
import { FaultProxy } from "./plugin/proxy.js";
import { ReplayPlugin, replayFromWorld } from "./plugin/replay.js";
import { SimPlugin } from "./plugin/serve.js";
import { processIo, SimSession } from "./plugin/sim-io.js";
import { World } from "./plugin/world.js";
import { parseTrace } from "./trace/read.js";

// mu-plugin-sim --world DIR: a real plugin executable whose declaration,
// behaviour and faults come from the simulated world in DIR.
// mu-plugin-sim --replay TRACE [--session N]: plays a plugin process recorded
// in a mu trace (a world whose `replay` holds sessions does the same).
// mu-plugin-sim --world DIR --proxy -- ARGV: a real plugin behind the
// world's fault script (a world whose `proxy` holds ARGV does the same).

const USAGE =
  "usage: mu-plugin-sim --world DIR [--proxy -- ARGV…] | --replay TRACE [--session N] (DIR holds world.json; see docs/testbed.md)";

function fail(line: string, code = 2): never {
  process.stderr.write(`mu-plugin-sim: ${line}\n`);
  process.exit(code);
}

interface Args {
  world?: string;
  replay?: string;
  session?: string;
  proxy?: boolean;
  help?: boolean;
}
let values: Args;
let positionals: string[];
try {
  ({ values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      world: { type: "string" },
      replay: { type: "string" },
      session: { type: "string" },
      proxy: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  fail(`${(err as Error).message.split("\n")[0]}; ${USAGE}`);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
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

if (!values.world && !values.replay) fail(`--world DIR or --replay TRACE is required; ${USAGE}`);
if (values.proxy && !values.world) fail("--proxy needs --world DIR for its fault script");
// The first stderr line is all mu shows of a failed plugin: make it the cause.
const problem = values.world ? worldProblem(values.world) : null;
if (problem) fail(problem);
process.on("uncaughtException", (err) => {
  fail(`crashed: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, 70);
});
const world = values.world ? new World(values.world) : undefined;
process.stdin.setEncoding("utf8");
const replay = values.replay
  ? replayFile(values.replay)
  : world
    ? replayFromWorld(world, processIo)
    : undefined;
const proxied = values.proxy ? positionals : world?.config().proxy;
if (replay) {
  process.stdin.on("data", (chunk: string) => replay.feed(chunk));
  process.stdin.on("end", () => replay.end());
} else if (proxied && world) {
  if (proxied.length === 0) fail("--proxy needs the real plugin's argv after --");
  // The scenario's own placeholders: this launcher and this world.
  const argv = proxied.map((a) =>
    a.replaceAll("$" + "{sim}", process.argv[1] ?? "").replaceAll("$" + "{world}", world.dir),
  );
  const asName = /^mu-plugin-(.+)$/.exec(basename(process.argv[1] ?? ""))?.[1];
  const proxy = new FaultProxy(argv, world, processIo, asName);
  process.stdin.on("data", (chunk: string) => proxy.feed(chunk));
  process.stdin.on("end", () => proxy.end());
} else if (world) {
  const sim = new SimPlugin(world, processIo);
  const session = new SimSession(sim, (dir, msg) => world.record(dir, msg), processIo);
  process.stdin.on("data", (chunk: string) => session.feed(chunk));
  process.stdin.on("end", () => session.end());
}
