import type { Command } from "commander";
import { named, type Run } from "./verb-args.js";

// `mu agent ...`: spawning, reading, messaging and closing agents.

export function addAgentVerbs(agent: Command, run: Run): void {
  agent
    .command("spawn")
    .description("start an agent on a plugin host: a job, its view, and its channel")
    .argument("<name>", "the agent's name in its workstream")
    .requiredOption("--host <host>", "the host to run it on")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--task <id>", "claim this task and give the agent its brief")
    .option("--send <text>", "the agent's first prompt")
    .option("--worktree", "work in a git worktree on the host, made from a commit of this checkout")
    .option("--from <rev>", "the commit the worktree is made from (default HEAD)")
    .option("--command <cmd>", "run this command line instead of the harness's own")
    .option("--role <role>", "full-access (default) or read-only")
    .option("--harness <name>", "the agent harness (default claude)")
    .action(async (name: string, opts: import("../verbs/agent-spawn.js").SpawnOptions) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-spawn.js")).agentSpawn(io, a.name, a.opts);
      });
    });
  agent
    .command("close")
    .description("stop an agent's job and close its view")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-close.js")).agentClose(io, a.name, a.opts);
      });
    });
  agent
    .command("forget")
    .description("end mu's record of a start no rule can settle, once you checked its host")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option(
      "--abandon",
      "end mu's record of an agent no verb can close (its host gone for good, its tree removed)",
    )
    .action(async (name: string, opts: { workstream?: string; abandon?: boolean }) => {
      await run(async (io) => {
        const a = named(name, opts);
        if (opts.abandon)
          return (await import("../verbs/agent-abandon.js")).agentAbandon(io, a.name, a.opts);
        return (await import("../verbs/agent-forget.js")).agentForget(io, a.name, a.opts);
      });
    });
  agent
    .command("reattach")
    .description("open a new view of a detached job, on the same agent row")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-close.js")).agentReattach(io, a.name, a.opts);
      });
    });
  agent
    .command("list")
    .description("list agents with their job's liveness and their view")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/agent-read.js")).agentList(io, opts));
    });
  const deliverVerbs = () => import("../verbs/agent-deliver.js");
  agent
    .command("read")
    .description("one agent's liveness, turn state and last settled turn")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { workstream?: string; json?: boolean }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-read.js")).agentRead(io, a.name, a.opts);
      });
    });
  agent
    .command("send")
    .description("deliver a message (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<text>", "the message")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--steer", "into the running turn")
    .option("--fresh", "as a new conversation")
    .option("--force", "even when the agent is not idle")
    .action(
      async (name: string, text: string, opts: import("../verbs/agent-deliver.js").SendOptions) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentSend(io, a.name, text, a.opts);
        });
      },
    );
  agent
    .command("command")
    .description("run one of the harness's named commands (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<command>", "the command")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--instructions <text>", "text the command takes")
    .option("--force", "even when the agent is not idle")
    .action(
      async (
        name: string,
        command: string,
        opts: { workstream?: string; instructions?: string; force?: boolean },
      ) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentCommand(io, a.name, command, a.opts);
        });
      },
    );
  agent
    .command("interrupt")
    .description("stop the running turn and deliver a message (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<text>", "the message")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, text: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await deliverVerbs()).agentInterrupt(io, a.name, text, a.opts);
      });
    });
  agent
    .command("abort")
    .description("stop the running turn (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .action(async (name: string, opts: { workstream?: string }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await deliverVerbs()).agentAbort(io, a.name, a.opts);
      });
    });
  agent
    .command("answer")
    .description("answer the agent's pending dialog with keys (journaled)")
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<keys...>", "the keys to press, in order")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--force", "even when no dialog is seen")
    .action(
      async (name: string, keys: string[], opts: { workstream?: string; force?: boolean }) => {
        await run(async (io) => {
          const a = named(name, opts);
          return (await deliverVerbs()).agentAnswer(io, a.name, keys, a.opts);
        });
      },
    );
  agent
    .command("check")
    .description(
      "report a delivery's state (0: accepted; 1: not accepted, unreachable or unresolved; 3: mu never sent it)",
    )
    .argument("<name>", "the agent: <name> or <workstream>/<name>")
    .argument("<msgId>", "the delivery")
    .option("-w, --workstream <ws>", "the workstream (default main)")
    .option("--json", "print JSON")
    .action(async (name: string, msgId: string, opts: { workstream?: string; json?: boolean }) => {
      await run(async (io) => {
        const a = named(name, opts);
        return (await import("../verbs/agent-check.js")).agentCheck(io, a.name, msgId, a.opts);
      });
    });
}
