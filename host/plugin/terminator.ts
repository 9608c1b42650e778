// Signals are process-wide, so this is one object per mu process. The first
// SIGINT, SIGTERM or SIGHUP means mu is terminating: no plugin starts and no
// request is sent from then on, every plugin goes through its stop sequence,
// later signals are absorbed, and once every group is empty the signal is
// raised again so mu dies by it (unless the running verb handles it).

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type TermSignal = (typeof SIGNALS)[number];

export interface Stoppable {
  stopForSignal(signal: TermSignal): Promise<void>;
  /** Synchronous: the exit that cannot wait. */
  killNow(): void;
}

class Terminator {
  signal: TermSignal | undefined;
  private readonly members = new Set<Stoppable>();
  private installed = false;
  /** Told the signal mu is about to die by: a trace's last record. */
  onRaise: ((s: TermSignal) => void) | undefined;
  private handledBy: ((s: TermSignal) => boolean) | undefined;
  private readonly cleanups = new Set<() => void>();
  private explainer: ((s: TermSignal) => void) | undefined;
  private readonly onSignal = (s: NodeJS.Signals) => this.begin(s as TermSignal);
  private readonly onExit = () => {
    for (const m of this.members) m.killNow();
  };

  get terminating(): boolean {
    return this.signal !== undefined;
  }

  add(m: Stoppable): void {
    this.members.add(m);
    this.install();
  }

  remove(m: Stoppable): void {
    this.members.delete(m);
  }

  /** What to tell the user, once the plugins are stopped, about the verb a signal cut short. */
  explainWith(fn: ((s: TermSignal) => void) | undefined): void {
    this.explainer = fn;
  }

  /**
   * Work that must happen even when a signal ends mu (a scratch directory
   * removed): dying by the raised signal runs no finally and no exit handler.
   * Returns the function that takes it back.
   */
  beforeRaise(fn: () => void): () => void {
    this.cleanups.add(fn);
    return () => this.cleanups.delete(fn);
  }

  /** A verb that handles a signal itself (prints a partial result, say) registers here. */
  handleSignals(fn: ((s: TermSignal) => boolean) | undefined): void {
    this.handledBy = fn;
  }

  private install(): void {
    if (this.installed) return;
    this.installed = true;
    for (const s of SIGNALS) process.on(s, this.onSignal);
    // A crash (an uncaught error, process.exit) cannot wait for a grace.
    process.on("exit", this.onExit);
  }

  private begin(signal: TermSignal): void {
    if (this.signal) return; // absorbed
    this.signal = signal;
    void Promise.allSettled([...this.members].map((m) => m.stopForSignal(signal))).then(() => {
      if (this.handledBy?.(signal)) return;
      this.explainer?.(signal);
      for (const s of SIGNALS) process.removeListener(s, this.onSignal);
      for (const fn of this.cleanups) fn();
      this.onRaise?.(signal);
      process.kill(process.pid, signal);
    });
  }
}

export const terminator = new Terminator();
