// What one mu or sh step left: shared by the step runner and the checks.

export interface Ran {
  exit: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}
