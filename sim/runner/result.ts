import type { LoadedScenario } from "./scenario.js";

// What running one scenario file gives back, whichever engine ran it.

export interface StepRecord {
  step: string;
  ok: boolean;
  /** Wall-clock ms when the step began and ended, to place it among the transcript's messages. */
  startedAt?: number;
  endedAt?: number;
  detail?: string;
  exit?: number | null;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
}

export interface ScenarioResult {
  scenario: LoadedScenario;
  ok: boolean;
  ms: number;
  /** Wall-clock ms when the scenario began: reports show times relative to it. */
  startedAt?: number;
  steps: StepRecord[];
  failure?: string;
  transcript: unknown[];
  /**
   * Set when the virtual engine ran the file: it keeps no message-by-message
   * transcript, only how many messages of each method crossed, by direction.
   */
  virtual?: {
    counts: { in: Record<string, number>; out: Record<string, number> };
    virtualMs: number;
  };
  /** With readBack: what the world applied, by effect and key, at the end. */
  effects?: Record<string, number>;
  /** With readBack: intents left in mu's journal; null when the DB does not read (a damage scenario's). */
  intents?: number | null;
}
