// What one scenario file's run on the virtual engine tells its caller: the
// runner's verdict, and what the explorer's invariants look at.

export type VirtualOutcome =
  | { ran: false; why: string }
  | {
      ran: true;
      failure?: string;
      exits: (number | null)[];
      transcript: { in: Record<string, number>; out: Record<string, number> };
      effects: Record<string, number>;
      intents: number;
      /** How each mu step ended by signal (SIGKILL for a killed one), else null. */
      signals: (string | null)[];
      /** What the world holds, by acquire and start key, and what mu recorded. */
      worldHosts: Record<string, { handle: string; released: boolean }>;
      worldJobs: Record<string, { state: string }>;
      muHosts: { key: string; state: string }[];
      muJobs: { key: string; state: string }[];
      pendingKeys: string[];
      /** Why mu's database does not open, or fails its integrity check. */
      dbProblem?: string;
      /** Every message mu sent the plugin, a line each. */
      sent: string;
      /** Calls about a machine or job that went to another instance than it was made under. */
      crossings: string[];
      /** msgIds of deliveries the sim answered with a reply that contradicts the request. */
      wrongReplies: string[];
      /** Everything mu printed, stdout and stderr. */
      output: string;
      dbBytes: Uint8Array | null;
      /** Virtual time the scenario took. */
      virtualMs: number;
      /** How often the clock jumped to a timer: each jump costs a turn of real work. */
      clockJumps: number;
      /** Reattaches that exited 0 while the view they recorded died within the readiness window. */
      deadViews: string[];
      /** Records that were there before a power cut and are gone after it. */
      lostCommits: string[];
      /** mu invocations that exited by themselves while a plugin process they started still ran. */
      outlived: string[];
    };
