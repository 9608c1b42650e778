// Seeds the explorer once broke, kept so the bug they found stays found:
// test/explore-found.test.ts runs them in `npm test`, and the mutation test
// set (test/mutation/testbed.mutate.ts) runs them too, since they are part
// of the testbed. Each runs on the virtual engine in a second or so; the
// shrunk scenario of some would need minutes of real time on the real engine
// (they move the clock past a dedupe window while a plugin holds a call).
export const FOUND: [number, string][] = [
  [
    508,
    "a start held in a plugin that outlived a killed mu applied after mu's resend did, and the sim counted its dedupe window from that resend's application instead of the key's first arrival: two jobs for one intent",
  ],
  [
    966,
    "a release settled late, while two acquires of the same name ran, marked the newer acquire's record released, so the other acquire's check let it through and mu lost a machine",
  ],
  [
    855,
    "a provider lost a machine under a job kind that outlives its host while a start on it was pending (applied by a plugin that outlived a killed mu): host status dropped the start's intent as if the job had gone with the machine, and the job ran on unknown to mu",
  ],
  [
    1799,
    "a host release read the name while another mu's acquire of it was in flight (its intent written just after the release had settled the name's pending effects) and released the record before the machine existed; the acquire then made a machine no record held",
  ],
  [
    3238,
    "a spawn resuming a start marked its agent live after another mu had closed it, so no verb could find the agent yet it held its host and plugin for good",
  ],
  [
    20534,
    "testbed, not mu: the sim let a start held in a plugin that outlived its mu make a job on a machine the provider had lost since (a kind whose jobs end with their host), which no real provider can; the invariant then saw a job mu had rightly written off",
  ],
  [
    11886,
    "a verb read an unknown start's intent, lost the race to settle it to a spawn that then wrote the next start, whose intent took the freed id; the verb's claim and settle matched by id alone and deleted the new start's intent, so its job ran on with neither record nor intent",
  ],
  [
    11248,
    "a stop reissued by the next verb after a close that could not finish ended the job after that verb had looked at the job's unknown delivery, which then stayed pending under an agent no verb could name (plugin rm refused for good), and the stopped job's view ran on",
  ],
  [
    35331,
    "a host release went through while a killed spawn's start was still pending on the machine; the resend the rules then made was refused for good by the plugin, yet the start read as one the rules might still settle, so forget refused and the plugin could never be removed",
  ],
  [
    437,
    "a host status whose provider looked at a machine before another mu's release reached it wrote its up reply over the released record, making it ready again; a spawn racing the release was then admitted and its start failed on a machine that was gone",
  ],
  [
    315,
    "model, not mu: a send and a close raced on an agent never spawned and both rightly answered not found, which the model's race table, presuming the agent there, did not allow",
  ],
];
