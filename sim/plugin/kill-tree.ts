import { liveProcesses } from "../../host/ports/proc-scan.js";

// Ending a script and everything it started, for a link whose timeout
// promises that nothing the script started still runs. Killing a shell's
// child before the shell lets the shell run its next command in the gap
// (`sleep 5; touch late` then touches late at once), so the tree is first
// frozen from the top down, round after round until a scan finds nothing
// new, and only then killed.

/** Every live process below `root`, parents before their children. */
function below(root: number): number[] {
  const kids = new Map<number, number[]>();
  for (const p of liveProcesses()) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p.pid]);
  const out: number[] = [];
  for (let i = 0, next = [root]; i < next.length; i++)
    for (const k of kids.get(next[i] as number) ?? []) {
      next.push(k);
      out.push(k);
    }
  return out;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export function killTree(root: number): void {
  const frozen: number[] = [];
  for (let round = 0, fresh = [root]; fresh.length > 0 && round < 100; round++) {
    for (const pid of fresh) signal(pid, "SIGSTOP");
    frozen.push(...fresh);
    fresh = below(root).filter((p) => !frozen.includes(p));
  }
  for (const pid of frozen) signal(pid, "SIGKILL");
}
