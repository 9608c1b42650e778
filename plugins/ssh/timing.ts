import { appendFileSync } from "node:fs";

// Where a call's time goes, for the bench: with MU_SSH_TIMING naming a file,
// the plugin appends one line per milestone (epoch ms, pid, what). mu drains
// a plugin's stderr unseen, so a file is the one place a bench can read it.

const file = process.env.MU_SSH_TIMING;

export function mark(what: string): void {
  if (!file) return;
  try {
    appendFileSync(
      file,
      `${(performance.timeOrigin + performance.now()).toFixed(1)} ${process.pid} ${what}\n`,
    );
  } catch {
    // timing is never worth failing a call over
  }
}

if (file) {
  try {
    appendFileSync(file, `${performance.timeOrigin.toFixed(1)} ${process.pid} process start\n`);
  } catch {
    // as above
  }
}
