import { rng } from "./rng.js";

// The virtual engine's scheduler for runs that ask for one (a scenario's
// `interleave` seed). Every mu invocation stops at each disk operation,
// after each sleep (a lock's poll among them) and before each timer's
// callback, and waits for its turn; the engine's loop (VirtualClock.run)
// hands out one turn per round, to a waiter the seed picks. Between two
// rounds every promise that can settle has, so each invocation has run as
// far as it can and the waiters are all that is ready: which goes first is
// the seed's choice, and the same seed makes the same choices.

export class Interleaver {
  private readonly ready: (() => void)[] = [];
  private readonly next: () => number;
  /** Turns handed out so far. */
  turns = 0;

  constructor(seed: number) {
    this.next = rng(seed);
  }

  /** Settles when the scheduler picks this waiter. */
  turn(): Promise<void> {
    return new Promise((go) => this.ready.push(go));
  }

  get waiting(): boolean {
    return this.ready.length > 0;
  }

  /** Lets one waiter, picked by the seed, go on. */
  release(): void {
    const [go] = this.ready.splice(Math.floor(this.next() * this.ready.length), 1);
    this.turns++;
    go?.();
  }
}
