import type { Command } from "commander";
import { checkHelp } from "../contract/help.js";
import { collect, type Run } from "./verb-args.js";

// `mu plugin ...`: registering, listing, checking and removing plugins.

export function addPluginVerbs(plugin: Command, run: Run): void {
  plugin
    .command("add")
    .description("register a plugin: check trust, run its handshake, record its declaration")
    .usage("<name> -- /abs/path/mu-plugin-<name> [args...]")
    .argument("<name>", "the plugin's name")
    .argument("<argv...>", "the absolute path of mu-plugin-<name> and its arguments")
    .action(async (name: string, argv: string[]) => {
      await run(async (io) => (await import("../verbs/plugin-add.js")).pluginAdd(io, name, argv));
    });
  plugin
    .command("rm")
    .description("remove a plugin that nothing names any more")
    .argument("<name>", "the plugin's name")
    .action(async (name: string) => {
      await run(async (io) => (await import("../verbs/plugin-rm.js")).pluginRm(io, name));
    });
  plugin
    .command("list")
    .description("list registered plugins with their argv, instance and seams")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/plugin-list.js")).pluginList(io, opts));
    });
  plugin
    .command("schema")
    .description("print the protocol schema file's path and the digest a handshake must name")
    .option("--digest", "print only the digest (sha256 of the file's exact bytes)")
    .option("--json", "print JSON")
    .action(async (opts: { digest?: boolean; json?: boolean }) => {
      await run(async (io) => (await import("../verbs/plugin-schema.js")).pluginSchema(io, opts));
    });
  plugin
    .command("check")
    .description("run a registered plugin through its contract, as a checklist")
    .argument("<name>", "the plugin's name")
    .option(
      "--seam <seam>",
      "also run the checks that make real things on this seam: host, job or channel (link is accepted; its checks always run) (repeatable)",
      collect,
    )
    .option(
      "--param <k=v>",
      "a value the seam checks pass on: host.acquire's params, and harness and cmd for job.start (repeatable)",
      collect,
    )
    .option(
      "--host <name>",
      "run the link checks on this host mu knows (e.g. a --plugin profile), not the suite's own target",
    )
    .option("--repeat <n>", "rounds of host.idempotency and job.idempotency (default 10)")
    .option("--junit <file>", "also write the checklist as JUnit XML")
    .option("--json", "print JSON")
    .addHelpText("after", checkHelp())
    .action(async (name: string, opts: import("../verbs/plugin-check.js").CheckOptions) => {
      await run(async (io) =>
        (await import("../verbs/plugin-check.js")).pluginCheck(io, name, opts),
      );
    });
}
