import type { Command } from "commander";
import type { Run } from "./verb-args.js";

// The verbs outside any namespace: `mu wait` and `mu state`.

export function addTopVerbs(program: Command, run: Run): void {
  program
    .command("wait")
    .description(
      "wait for agents' turns to settle (0: settled; 5: timed out or dead; 7: a host deadline)",
    )
    .argument("<agents...>", "the agents: <name> (in -w's workstream) or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option(
      "--timeout <seconds>",
      "give up after this many seconds, fractions allowed (default: none, wait until they settle)",
    )
    .option("--any", "return when the first one settles")
    .option("--json", "print JSON")
    .action(
      async (
        names: string[],
        opts: { workstream?: string; timeout?: string; any?: boolean; json?: boolean },
      ) => {
        await run(async (io) => (await import("../verbs/wait.js")).wait(io, names, opts));
      },
    );
  program
    .command("state")
    .description("what mu owes: effects still pending, and how to settle each")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/state.js")).state(io, opts));
    });
}
