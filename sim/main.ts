import { parseArgs } from "node:util";
import { SimPlugin } from "./plugin/serve.js";
import { World } from "./plugin/world.js";

// mu-plugin-sim --world DIR: a real plugin executable whose declaration,
// behaviour and faults come from the simulated world in DIR.

const { values } = parseArgs({ options: { world: { type: "string" } } });
if (!values.world) {
  process.stderr.write("mu-plugin-sim: --world DIR is required\n");
  process.exit(2);
}
const world = new World(values.world);
const sim = new SimPlugin(world);

// Messages are handled one at a time, in order, as a plain plugin would.
let queue = Promise.resolve();
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buf += chunk;
  for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line);
    } catch {
      world.record("note", { unparseable: line.slice(0, 200) });
      continue;
    }
    world.record("in", msg);
    // shutdown must not wait behind a delayed call: a plugin told to stop
    // stops, cancelling what is in flight, well within mu's grace.
    // Ending a watch is immediate too: its notification must not follow the cancel.
    if (msg.method === "$/cancel") {
      const watchId = (msg.params as { watchId?: unknown } | undefined)?.watchId;
      if (typeof watchId === "string") sim.channel.cancelWatch(watchId);
      continue;
    }
    if (msg.method === "shutdown") {
      void sim.handle(msg as never);
      continue;
    }
    queue = queue
      .then(() => sim.handle(msg as never))
      .catch((err: unknown) => {
        process.stderr.write(`mu-plugin-sim: ${(err as Error).message}\n`);
      });
  }
});
process.stdin.on("end", () => {
  void queue.then(() => sim.onEof());
});
