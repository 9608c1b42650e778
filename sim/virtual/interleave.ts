import { rng } from "./rng.js";

// The virtual engine's scheduler for runs that ask for one (a scenario's
// `interleave` seed). Every mu invocation stops at each disk operation,
// after each sleep (a lock's poll among them) and before each timer's
// callback, and waits for its turn; the engine's loop (VirtualClock.run)
// hands out one turn per round, to a waiter the seed picks. Between two
// rounds every promise that can settle has, so each invocation has run as
// far as it can and the waiters are all that is ready: which goes first is
// the seed's choice, and the same seed makes the same choices.
//
// Mostly the one that went last goes on: a race is lost where one verb
// runs several steps (a whole commit, say) between two of another's, which
// a fair coin at every step would seldom draw.

/** How often the invocation that went last goes on again, when it is ready. */
const STAY = 0.8;

export class Interleaver {
  private readonly ready: { who: number; go: () => void }[] = [];
  private readonly next: () => number;
  private last: number | undefined;
  /** Turns handed out so far. */
  turns = 0;

  constructor(seed: number) {
    this.next = rng(seed);
  }

  /** Settles when the scheduler picks this waiter; `who` is its process. */
  turn(who: number): Promise<void> {
    return new Promise((go) => this.ready.push({ who, go }));
  }

  get waiting(): boolean {
    return this.ready.length > 0;
  }

  /** Lets one waiter, picked by the seed, go on. */
  release(): void {
    const stay = this.ready.findIndex((w) => w.who === this.last);
    const at = stay >= 0 && this.next() < STAY ? stay : Math.floor(this.next() * this.ready.length);
    const [w] = this.ready.splice(at, 1);
    this.turns++;
    this.last = w?.who;
    w?.go();
  }
}
