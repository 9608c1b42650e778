import { parseArgs } from "node:util";
import { SimPlugin } from "./plugin/serve.js";
import { processIo, SimSession } from "./plugin/sim-io.js";
import { World } from "./plugin/world.js";

// mu-plugin-sim --world DIR: a real plugin executable whose declaration,
// behaviour and faults come from the simulated world in DIR.

const { values } = parseArgs({ options: { world: { type: "string" } } });
if (!values.world) {
  process.stderr.write("mu-plugin-sim: --world DIR is required\n");
  process.exit(2);
}
const world = new World(values.world);
const sim = new SimPlugin(world, processIo);
const session = new SimSession(sim, (dir, msg) => world.record(dir, msg), processIo);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => session.feed(chunk));
process.stdin.on("end", () => session.end());
