import { type Command, Option } from "commander";
import type { Run } from "./verb-args.js";

// `mu host ...`: host profiles, a provider's hosts, and running through a host's link.

export function addHostVerbs(host: Command, run: Run): void {
  const hostVerbs = () => import("../verbs/host-provider.js");
  host
    .command("add")
    .description("add a host whose link is a plugin")
    .argument("<name>", "the host's name")
    // Required, but checked by the verb, so its own line with the fix reaches
    // the user rather than the parser's.
    .option("--plugin <plugin>", "the plugin that is the host's link (required)")
    .option(
      "--fetch <template>",
      "an sh command that fetches when the link cannot, with {host} and {remoteCwd} replaced by the host's name and the remote path, quoted (required then)",
    )
    .option("--repo <path>", "the repository on the host")
    .option(
      "--max-sessions <n>",
      "at most this many channels at once, 1 to 1000 (default: no limit)",
    )
    // Kept only to refuse them with a reason: a --plugin host's link is the plugin.
    .addOption(new Option("--shell <cmd>").hideHelp())
    .addOption(new Option("--exec <cmd>").hideHelp())
    .action(async (name: string, opts: import("../verbs/host-profile.js").AddOptions) => {
      await run(async (io) => (await import("../verbs/host-profile.js")).hostAdd(io, name, opts));
    });
  host
    .command("rm")
    .description("remove a host profile")
    .argument("<name>", "the host's name")
    .action(async (name: string) => {
      await run(async (io) => (await import("../verbs/host-profile.js")).hostRm(io, name));
    });
  host
    .command("exec")
    .description("run a POSIX sh script on a host; exits with the script's code (124: timed out)")
    .usage("<name> [--timeout-ms MS] [--cwd DIR] (-- <script...> | - | --file PATH)")
    .argument("<name>", "the host's name")
    .argument("[script...]", "the script (words are joined by spaces; a lone - reads stdin)")
    .option("--file <path>", "read the script from this file (- reads stdin)")
    .option("--cwd <dir>", "run it in this directory (default: the host's login directory)")
    .option("--timeout-ms <ms>", "the script's time limit in milliseconds (default: 20000)")
    // The old spelling, still taken (with a line saying so): see timeoutOption.
    .addOption(new Option("--timeout <ms>").hideHelp())
    .action(
      async (name: string, script: string[], opts: import("../verbs/host-exec.js").ExecOptions) => {
        await run(async (io) =>
          (await import("../verbs/host-exec.js")).hostExec(io, name, script, opts),
        );
      },
    );
  host
    .command("fetch")
    .description("fetch a host repository's HEAD into your checkout, as refs/mu/fetched/<name>")
    .argument("<name>", "the host's name")
    .option(
      "--from <path>",
      "the repository on the host (default: the host's --repo, else its login directory)",
    )
    .option("--into <path>", "the local checkout (default: the one you are in)")
    .option("--timeout-ms <ms>", "the fetch's time limit in milliseconds (default: 20000)")
    // The old spelling, still taken (with a line saying so): see timeoutOption.
    .addOption(new Option("--timeout <ms>").hideHelp())
    .action(
      async (
        name: string,
        opts: { from?: string; into?: string; timeout?: string; timeoutMs?: string },
      ) => {
        await run(async (io) => (await import("../verbs/host-git.js")).hostFetch(io, name, opts));
      },
    );
  host
    .command("push")
    .description("make a host repository hold a commit of your checkout (idempotent)")
    .argument("<name>", "the host's name")
    .option("--rev <rev>", "the commit (default HEAD)")
    .option("--to <path>", "the repository on the host (default: the host's --repo)")
    .option("--timeout-ms <ms>", "each push's time limit in milliseconds (default: 20000)")
    // The old spelling, still taken (with a line saying so): see timeoutOption.
    .addOption(new Option("--timeout <ms>").hideHelp())
    .action(
      async (
        name: string,
        opts: { rev?: string; to?: string; timeout?: string; timeoutMs?: string },
      ) => {
        await run(async (io) => (await import("../verbs/host-git.js")).hostPush(io, name, opts));
      },
    );
  host
    .command("check")
    .description("run the plugin's check steps for a host, as a checklist")
    .argument("<name>", "the host's name")
    .option("--phase <phase>", "only this phase: template, reach or agent")
    .option("--harness <name>", "the harness the agent phase checks (default claude)")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { phase?: string; json?: boolean; harness?: string }) => {
      await run(async (io) => (await import("../verbs/host-check.js")).hostCheck(io, name, opts));
    });
  host
    .command("acquire")
    .description("acquire a machine from a provider plugin (an effect, journaled)")
    .argument("<name>", "the host's name")
    .requiredOption("--provider <plugin>", "the provider plugin")
    .option(
      "--param <k=v>",
      "a provider parameter (repeatable)",
      (v: string, acc: string[] = []) => [...acc, v],
    )
    .action(async (name: string, opts: { provider: string; param?: string[] }) => {
      await run(async (io) => (await hostVerbs()).hostAcquire(io, name, opts));
    });
  host
    .command("release")
    .description("release a provider host (idempotent)")
    .argument("<name>", "the host's name")
    .action(async (name: string) => {
      await run(async (io) => (await hostVerbs()).hostRelease(io, name));
    });
  host
    .command("forget")
    .description("end mu's record of an acquire no rule can settle, once you checked the provider")
    .argument("<name>", "the host's name")
    .action(async (name: string) => {
      await run(async (io) => (await import("../verbs/host-forget.js")).hostForget(io, name));
    });
  host
    .command("status")
    .description("ask the provider how the host is, and record its facts")
    .argument("<name>", "the host's name")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { json?: boolean }) => {
      await run(async (io) => (await hostVerbs()).hostStatus(io, name, opts));
    });
  host
    .command("list")
    .description("list hosts with their state, plugin and instance")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await hostVerbs()).hostList(io, opts));
    });
}
