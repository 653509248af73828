// The Kafka log's circuit breaker: while the brokers cannot be reached, appends are refused at once (the
// gateway answers 503 with Retry-After without holding the request for APPEND_TIMEOUT_MS) and the log
// reports itself unhealthy (readiness false). It opens when a produce request fails or has had no answer
// for `openAfterMs` (the append timeout: what the gateway already calls unavailable), probes the brokers
// every `probeIntervalMs` while open (a metadata request, not a record: nothing is written to find out),
// and closes when a probe succeeds. Each change of state is told once (one log line), never per request.
// Only news of the present counts: a produce request sent before the circuit last closed that fails or
// times out afterwards (kafkajs retries a request for many seconds) does not open it again.
// The probe and the clock are injected, so the states have unit tests without a broker.
import { LogUnavailableError } from '../record-log.ts';

export interface CircuitChange {
  state: 'open' | 'closed';
  /** A line for the process's log. */
  message: string;
}

export interface CircuitBreakerOptions {
  /** A produce request without an answer for this long opens the circuit. */
  openAfterMs: number;
  /** How often the brokers are probed while the circuit is open. */
  probeIntervalMs: number;
  /** Resolves when the brokers can take records again; rejects (or hangs: bounded here) when not. */
  probe: () => Promise<void>;
  onChange?: ((change: CircuitChange) => void) | undefined;
  now?: () => number;
}

export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions;
  readonly #now: () => number;
  /** Since when it is open (ms), or null while closed. */
  #openSince: number | null = null;
  #reason = '';
  /** Counts the closings: a request sent in an earlier generation tells nothing of this one. */
  #generation = 0;
  #probeTimer: NodeJS.Timeout | null = null;
  #probing = false;
  #stopped = false;
  /** Failures of watched requests the circuit has told of (by opening), or that came from before it closed. */
  readonly #accounted = new WeakSet<object>();

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get isOpen(): boolean {
    return this.#openSince !== null;
  }

  /** Throws the refusal while the circuit is open; appends call it first. */
  check(): void {
    if (this.#openSince === null) return;
    throw new LogUnavailableError(`Kafka is unreachable (${this.#reason}); refused without waiting`, {
      reported: true,
    });
  }

  /** The log's health while open (null while closed). */
  health(): { ok: false; detail: string } | null {
    if (this.#openSince === null) return null;
    return {
      ok: false,
      detail:
        `Kafka unreachable since ${new Date(this.#openSince).toISOString()} (${this.#reason}): ` +
        `appends are refused at once until a probe of the brokers succeeds (every ${this.#options.probeIntervalMs} ms)`,
    };
  }

  /** Runs a produce request under watch: its failure, or no answer within openAfterMs, opens the circuit. */
  watch<T>(send: () => Promise<T>): Promise<T> {
    const generation = this.#generation;
    const timer = setTimeout(() => {
      if (generation === this.#generation) {
        this.#open(`no answer to a produce request within ${this.#options.openAfterMs} ms`);
      }
    }, this.#options.openAfterMs);
    timer.unref?.();
    const sending = send();
    sending.then(
      () => clearTimeout(timer),
      (error: unknown) => {
        clearTimeout(timer);
        if (this.#stopped) return;
        if (generation === this.#generation) this.#open(`a produce request failed: ${messageOf(error)}`);
        if (typeof error === 'object' && error !== null) this.#accounted.add(error);
      },
    );
    return sending;
  }

  /**
   * Whether a watched request's failure is already told of: it opened the circuit (or found it open), or
   * it was sent before the circuit last closed (its records were answered 503 long ago). Such failures need
   * no line of their own; one while the log closes does.
   */
  accounts(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.#accounted.has(error);
  }

  /** Stops probing (the log is closing). */
  stop(): void {
    this.#stopped = true;
    if (this.#probeTimer) clearInterval(this.#probeTimer);
    this.#probeTimer = null;
  }

  #open(reason: string): void {
    if (this.#openSince !== null || this.#stopped) return;
    this.#openSince = this.#now();
    this.#reason = reason;
    this.#options.onChange?.({
      state: 'open',
      message:
        `record log unavailable: ${reason}; answering 503 at once and probing Kafka every ` +
        `${this.#options.probeIntervalMs} ms (circuit opened)`,
    });
    this.#probeTimer = setInterval(() => void this.#probe(), this.#options.probeIntervalMs);
    this.#probeTimer.unref?.();
  }

  async #probe(): Promise<void> {
    if (this.#probing || this.#openSince === null || this.#stopped) return;
    this.#probing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A probe that hangs counts as failed; the next one starts after it is given up.
      const bound = Math.max(this.#options.probeIntervalMs, 2_000);
      await Promise.race([
        this.#options.probe(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${bound} ms`)), bound);
        }),
      ]);
    } catch {
      return; // still unreachable: stays open, probed again
    } finally {
      clearTimeout(timer);
      this.#probing = false;
    }
    if (this.#openSince === null || this.#stopped) return;
    const downMs = this.#now() - this.#openSince;
    this.#openSince = null;
    this.#generation += 1;
    if (this.#probeTimer) clearInterval(this.#probeTimer);
    this.#probeTimer = null;
    this.#options.onChange?.({
      state: 'closed',
      message: `record log available again: Kafka answered a probe after ${downMs} ms (circuit closed)`,
    });
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.slice(0, 200) ?? '';
}
