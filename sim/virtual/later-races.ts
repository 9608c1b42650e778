// The concurrent family's races added after its seeds were fixed (concurrent-workload.ts
// runs them; workloads.ts draws each from a stream of its own).

import type { Fault } from "../plugin/fault-types.js";
import type { Race } from "./race.js";

/** What a receipt answers when the harness it asks never replies. */
const UNREACHABLE: Fault["do"] = {
  patchReply: { state: "unreachable", reason: "the harness does not answer" },
};

/** What a machine that is gone for good answers every call about its job. */
const GONE: Fault["do"] = { error: { kind: "permanent", message: "the machine is gone" } };

/**
 * Races added once the seeds of RACES were fixed: a seed draws one of these
 * from a stream of its own (workloads.ts), so every seed that drew a race of
 * RACES still draws it.
 */
export const LATER_RACES: Race[] = [
  // The release reads the lost record, then waits for its plugin's handshake
  // (held), while host rm removes the record: its committing re-read must
  // say the record was removed, not that another mu is acquiring it.
  {
    name: "host release of a lost host racing host rm",
    setup: ["host acquire --provider sim h1"],
    lost: "h1",
    verbs: ["host release h1", "host rm h1"],
    calls: ["initialize", "host.release"],
    aside: ["host status h1", "host list"],
  },
  // A spawn killed once its job runs, its view opened or recorded, is
  // resumed by two spawns of the name at once. With no readiness window the
  // first may finish it while the second waits for the store's lock between
  // its read and its takeover: that commit must find the record no longer
  // as read (agent.changed), not finish the spawn a second time.
  {
    name: "two resumes of a spawn cut short",
    setup: [],
    cut: [{ verb: "agent spawn c --host box", at: ["view.pane-opened", "view.recorded"] }],
    verbs: ["agent spawn c --host box", "agent spawn c --host box"],
    calls: ["job.attach", "channel.baseline"],
    aside: ["agent list", "agent read c"],
    env: { MU_VIEW_READY_MS: "0" },
  },
  // A send killed before its call left leaves its delivery pending; a
  // close killed once its stop ended the job leaves that delivery's call
  // naming the host in its target, its job gone and its row closed. host
  // rm, alone once state named that delivery, must be refused; then a
  // second close settles what they left while host rm runs again, which
  // may remove the host only once the delivery is settled.
  {
    name: "host rm racing the close that settles a pending delivery",
    setup: ["agent spawn a --host box"],
    cut: [
      { verb: "agent send a hello-1", faults: [{ on: "channel.send", do: { killMu: "before" } }] },
      {
        verb: "agent close a",
        at: ["effect.intent-deleted"],
        faults: [{ on: "channel.receipt", times: "always", do: UNREACHABLE }],
      },
    ],
    alone: ["state", "host rm box"],
    verbs: ["agent close a", "host rm box"],
    calls: ["channel.receipt", "job.stop"],
    aside: ["state", "agent list"],
  },
  // An agent whose machine answers nothing any more is let go by forget
  // --abandon while another mu spawns the name again. The abandon's commit
  // frees the name; held just after it (its pause point), the spawn may
  // run to its end on the freed name. The abandon then kills only what it
  // found before its commit: never the new agent's view.
  {
    name: "agent forget --abandon racing a spawn of the name",
    setup: ["agent spawn a --host box"],
    verbs: ["agent forget a --abandon", "agent spawn a --host box"],
    calls: ["testbed.pause", "job.status"],
    aside: ["agent list", "state"],
    env: { MU_TESTBED_PAUSE: "forget.committed" },
    // The spawn starts once the abandon has committed and waits at its
    // pause, so the name is free for it whatever order the scheduler picks.
    after: "testbed.pause",
    faults: [
      { on: "job.status", times: "always", do: GONE },
      { on: "job.stop", times: "always", do: GONE },
    ],
  },
  // A close once a spawn of the name has its job running: the close does
  // not wait for the spawn, which must then say another mu closed the agent,
  // whether it was reading its record back, opening its view or waiting for
  // readiness.
  {
    name: "agent close racing the spawn of its name",
    setup: [],
    verbs: ["agent spawn c --host box", "agent close c"],
    calls: ["channel.baseline", "job.attach"],
    aside: ["agent list", "state"],
    after: "job.start",
  },
];
