import { RefusedError } from "../../errors.js";

// The way on from a spawn cut short while its job may run: the same spawn
// again (which finishes or resumes it, in a new view if its view died) or a
// close. The failing spawn's own line and mu state both say it in these
// words, so a person is never told two different things about one agent.

/**
 * The spawn that takes the record on, as a command. A record whose start was
 * never sent is taken back and replaced by what the new spawn asks for, so
 * its way on names --worktree when it had a tree: without it the agent would
 * run outside one and the tree that spawn may have made would stay unlisted.
 */
export function spawnAgainCommand(
  ws: string,
  agent: string,
  host: string,
  worktree = false,
): string {
  return `mu agent spawn ${agent} --host ${host} -w ${ws}${worktree ? " --worktree" : ""}`;
}

export function closeCommand(ws: string, agent: string): string {
  return `mu agent close ${agent} -w ${ws}`;
}

export function spawnAgainOrClose(how: "finish" | "resume", spawn: string, close: string): string {
  return `${how} it: ${spawn} with the same --send or --task, if it had one (or close it: ${close})`;
}

/** A spawn whose agent another mu closed while it was at `when`: nothing of it is left to do or undo. */
export function closedMeanwhile(
  ws: string,
  agent: string,
  host: string,
  when: string,
): RefusedError {
  return new RefusedError(
    "spawn.closed-meanwhile",
    "agent",
    `${ws}/${agent} was closed by another mu ${when}; this spawn did nothing more`,
    { hint: `spawn it again if you still want it: ${spawnAgainCommand(ws, agent, host)}` },
  );
}
