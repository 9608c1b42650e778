import type { JobTarget } from "../host/contract/job-seam.js";
import type { InitializeResult, JobSeam, KeyCaps } from "../host/protocol/declaration.js";
import { FakeProvider, type Hooks, INSTANCE, refusal } from "./fake-provider.js";

// A job plugin for in-process tests of `mu plugin check`'s job checks: a job
// is a record by key that every start of the "plugin" shares, as the starts
// of a real plugin share its backend, so a start from one process is seen by
// the lookup of another. Correct by default; each hook replaces one answer,
// so a test can give the check the answer a broken plugin would. It is a
// FakeProvider underneath for the virtual clock and the record of calls, and
// for the machine a provider's jobs run on: given provider hooks, it
// declares the host seam too.

export type StartReply = {
  view: { command: string; env: Record<string, string> };
  handle?: string;
  baseline?: { runs: number };
};

export interface Job {
  key: string;
  handle: string;
  state: "running" | "ended";
  reply: StartReply;
}

export interface JobHooks {
  /**
   * What job.start answers, n counting from 1 per key. make() is the correct
   * answer and its effect: it makes the key's job (the same one for a
   * repeat, which is the dedupe) and answers its reply.
   */
  start?: (key: string, make: () => StartReply, n: number) => unknown;
  /** What job.status answers, n counting from 1 per key. */
  status?: (job: Job | undefined, n: number) => unknown;
  /** What job.stop answers once it ended the job, n counting from 1 per key; null by default. */
  stop?: (key: string, n: number) => unknown;
  /** What job.lookup answers; answer() is the correct one, which fences a key it answers none for. */
  lookup?: (key: string, job: Job | undefined, fence: boolean, answer: () => unknown) => unknown;
}

/** Every key capability declared, so each path of the job checks runs. */
export const ALL_CAPS: KeyCaps = {
  lookup: true,
  fenceKey: true,
  dedupe: { exact: true, windowMs: 5000 },
  inFlightMs: 1000,
};

export const jobSeam = (start: KeyCaps = ALL_CAPS, more: Partial<JobSeam> = {}): JobSeam => ({
  kind: "fake",
  view: "detached",
  handle: "reply",
  start,
  checks: [],
  ...more,
});

export class FakeJobPlugin extends FakeProvider {
  readonly jobs = new Map<string, Job>();
  readonly hello: InitializeResult;

  constructor(
    readonly seam: JobSeam,
    readonly jobHooks: JobHooks = {},
    provider?: Hooks,
  ) {
    super(provider ?? {});
    this.hello = {
      protocol: 1,
      plugin: { name: "fake-jobs", version: "0.1.0" },
      instance: INSTANCE,
      schema: "sha256:fake",
      seams: {
        job: seam,
        // The load rules let a host seam come only with link and job.
        ...(provider
          ? {
              host: { acquire: { lookup: true, fenceKey: true } },
              link: {
                fetch: false,
                slots: "self",
                remoteOnTimeout: "stopped",
                quiescence: "provable",
                maxScriptBytes: 131072,
                checks: [],
              },
            }
          : {}),
      },
    };
  }

  override answer(method: string, params: Record<string, unknown>): unknown {
    if (!method.startsWith("job.")) return super.answer(method, params);
    const h = this.jobHooks;
    // job.status names its job by the target alone.
    const key = (params.key ?? (params.target as JobTarget).job.key) as string;
    const job = this.jobs.get(key);
    switch (method) {
      case "job.start": {
        const make = () => {
          let j = this.jobs.get(key);
          if (!j) {
            const handle = `j${this.jobs.size + 1}`;
            const reply: StartReply = {
              view: { command: `fake-attach ${handle}`, env: {} },
              ...(this.seam.handle === "reply" ? { handle } : {}),
              ...(this.seam.firstTurn === "at-start" ? { baseline: { runs: 0 } } : {}),
            };
            j = { key, handle, state: "running", reply };
            this.jobs.set(key, j);
          }
          return j.reply;
        };
        if (this.fenced.has(key) && !h.start) throw refusal("job.start", "that key was fenced");
        return h.start ? h.start(key, make, this.nth(`start ${key}`)) : make();
      }
      case "job.status": {
        if (h.status) return h.status(job, this.nth(`status ${key}`));
        if (!job) return { state: "lost", reason: "no such job" };
        return job.state === "running" ? { state: "running" } : { state: "ended", exit: 0 };
      }
      case "job.stop": {
        if (job) job.state = "ended";
        return h.stop ? h.stop(key, this.nth(`stop ${key}`)) : null;
      }
      case "job.lookup": {
        const fence = params.fence === true;
        const answer = () => {
          // A stopped job's key was still started once: found, never none.
          if (job) return { found: { handle: job.handle, ...job.reply } };
          if (fence) this.fenced.add(key);
          return { none: true };
        };
        return h.lookup ? h.lookup(key, job, fence, answer) : answer();
      }
    }
    throw new Error(`the fake job plugin does not know ${method}`);
  }

  /** The target the nth call sent, counting back from the last when negative. */
  targetOf(n: number): JobTarget {
    return this.calls.at(n)?.params.target as JobTarget;
  }

  /** Each job's state, in the order they were made. */
  jobStates(): string[] {
    return [...this.jobs.values()].map((j) => j.state);
  }
}
