// LagGate: where the gateway and the consumers share a process (npm start), it holds ingestion back while a
// consumer group is too far behind. Without it, a process accepting faster than it lands grows its backlog
// without end: nothing is lost (it is all in the log), but what is acknowledged lands minutes or hours
// later, and the gateway's CPU goes to records the consumers cannot keep up with (BENCHMARKS.md, "npm start
// sustained"). With it, once a group's lag reaches `maxLag` records the gateway answers every request 503
// with Retry-After (admission.ts in @tally/gateway, through a flag its threads share), until the lag is
// back under 90% of the bound: clients retry, acknowledged records land within the bound, and the CPU a
// refused request would have cost goes to landing.
// The lag is the group's in the record log (ConsumerProgress), read every `intervalMs`; between two reads
// the gateway may accept up to that long of its rate beyond the bound.
import type { ConsumerLogger } from './logger.ts';
import type { ConsumerProgress } from './progress.ts';

/** The bound is released once the lag is back under this share of it, so that the gate does not flap. */
export const LAG_GATE_REOPEN = 0.9;

export interface LagGateOptions {
  progress: Pick<ConsumerProgress, 'poll' | 'states'>;
  /** Records a group may have waiting before ingestion is held back (GATEWAY_MAX_CONSUMER_LAG; > 0). */
  maxLag: number;
  /** Set (element 0 non-zero) while ingestion is held back; the gateway's threads read it. */
  flag: Int32Array;
  /** How often the lag is read (ms). */
  intervalMs?: number;
  logger?: ConsumerLogger | undefined;
}

/** Why ingestion is held back: since when, the group furthest behind and its lag at the last read. */
export interface IngestionHold {
  since: number;
  group: string;
  lag: number;
  max_lag: number;
  /** The lag under which ingestion is accepted again (90% of max_lag). */
  reopens_below: number;
}

export class LagGate {
  readonly #options: LagGateOptions;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  #hold: IngestionHold | null = null;

  constructor(options: LagGateOptions) {
    if (!(options.maxLag > 0)) throw new RangeError('LagGate needs a bound above 0');
    this.#options = options;
  }

  /** Whether ingestion is held back now. */
  get closed(): boolean {
    return Atomics.load(this.#options.flag, 0) !== 0;
  }

  /** Why ingestion is held back now (the health view says it), or null while it is accepted. */
  hold(): IngestionHold | null {
    return this.closed ? this.#hold : null;
  }

  /** Reads the lag now and every intervalMs. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.check(), this.#options.intervalMs ?? 500);
    this.#timer.unref();
    void this.check();
  }

  /** Stops reading, and lets ingestion through (a process that stops its consumers stops its gateway first). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#checking;
    Atomics.store(this.#options.flag, 0, 0);
    this.#hold = null;
  }

  /** Reads the groups' lag once and closes or opens the gate (one read at a time). */
  check(): Promise<void> {
    this.#checking ??= (async () => {
      try {
        await this.#options.progress.poll();
        this.#decide();
      } finally {
        this.#checking = null;
      }
    })();
    return this.#checking;
  }

  #decide(): void {
    const { maxLag, flag, logger } = this.#options;
    const states = this.#options.progress.states();
    const worst = states.reduce((most, s) => (s.lag > most.lag ? s : most), { group: '', lag: 0 });
    if (this.closed && this.#hold) this.#hold = { ...this.#hold, group: worst.group, lag: worst.lag };
    if (!this.closed && worst.lag >= maxLag) {
      this.#hold = {
        since: Date.now(),
        group: worst.group,
        lag: worst.lag,
        max_lag: maxLag,
        reopens_below: Math.ceil(maxLag * LAG_GATE_REOPEN),
      };
      Atomics.store(flag, 0, 1);
      logger?.warn(
        { group: worst.group, lag: worst.lag, max_lag: maxLag },
        'consumers behind: ingestion answers 503 until they catch up (GATEWAY_MAX_CONSUMER_LAG)',
      );
    } else if (this.closed && worst.lag < maxLag * LAG_GATE_REOPEN) {
      Atomics.store(flag, 0, 0);
      this.#hold = null;
      logger?.info({ lag: worst.lag, max_lag: maxLag }, 'consumers caught up: ingestion accepted again');
    }
  }
}
