import type { Command } from "commander";
import type { Run } from "./verb-args.js";

// `mu task ...`: the minimal tasks a --task spawn claims.

export function addTaskVerbs(task: Command, run: Run): void {
  task
    .command("add")
    .description("add an open task")
    .argument("<id>", "the task's id")
    .action(async (id: string) => {
      await run(async (io) => (await import("../verbs/task.js")).taskAdd(io, id));
    });
  task
    .command("list")
    .description("list tasks and who claimed them")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      await run(async (io) => (await import("../verbs/task.js")).taskList(io, opts));
    });
}
