import { parseArgs } from "node:util";
import { worldProblem } from "./plugin/check-world.js";
import { SimPlugin } from "./plugin/serve.js";
import { processIo, SimSession } from "./plugin/sim-io.js";
import { World } from "./plugin/world.js";

// mu-plugin-sim --world DIR: a real plugin executable whose declaration,
// behaviour and faults come from the simulated world in DIR.

const USAGE = "usage: mu-plugin-sim --world DIR (DIR holds world.json; see the README)";

function fail(line: string, code: number): never {
  process.stderr.write(`mu-plugin-sim: ${line}\n`);
  process.exit(code);
}

let values: { world?: string; help?: boolean };
try {
  values = parseArgs({
    options: { world: { type: "string" }, help: { type: "boolean", short: "h" } },
  }).values;
} catch (err) {
  fail(`${(err as Error).message.split("\n")[0]}; ${USAGE}`, 2);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!values.world) fail(`--world DIR is required; ${USAGE}`, 2);
// The first stderr line is all mu shows of a failed plugin: make it the cause.
const problem = worldProblem(values.world);
if (problem) fail(problem, 2);
process.on("uncaughtException", (err) => {
  fail(`crashed: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, 70);
});
const world = new World(values.world);
const sim = new SimPlugin(world, processIo);
const session = new SimSession(sim, (dir, msg) => world.record(dir, msg), processIo);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => session.feed(chunk));
process.stdin.on("end", () => session.end());
