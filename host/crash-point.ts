// The testbed's fault hook: MU_CRASH_AT=<point> makes mu SIGKILL itself at
// that durable boundary, so a scenario can prove what survives a crash
// exactly there. Inert unless the variable names the point; every point is
// listed in the README.

export type CrashPointName = "store.before-rename";

export function crashPoint(
  name: CrashPointName,
  env: Readonly<Record<string, string | undefined>>,
): void {
  if (env.MU_CRASH_AT === name) process.kill(process.pid, "SIGKILL");
}
