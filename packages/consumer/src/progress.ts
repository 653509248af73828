// Whether each consumer group of this process makes progress: what its readiness (/readyz) and the
// metrics `tally_consumer_lag_records{group}` and `tally_consumer_last_progress_seconds{group}` say, and
// what the dashboard's health view shows under `npm start`. A group is stalled when records have been
// waiting for it (its lag in the record log, or the batch its loop holds) and it has committed no batch
// for `stallMs` (CONSUMER_STALL_MS): a batch retried for ever (a warehouse that refuses it, an insert the
// engine will never take) holds everything behind it, in every project, and the process must say so
// rather than answer ready. A group with nothing waiting is never stalled, however long since its last
// batch; the stall is counted from when records began to wait, or from the last commit if later.
//
// The lag is read from the record log's backlog() every `pollMs` (the lag alone, without Kafka's search
// for the oldest record's time), and is at least the batch in hand, so that a group that has never
// committed (which the log does not list) is seen too. The batch loop reports to its group's GroupProgress.
import type { RecordLog } from '@tally/log';
import type { ConsumerLogger } from './logger.ts';

/** A group's state, as the readiness, the metrics and the dashboard read it. */
export interface GroupProgressState {
  group: string;
  /** Records waiting for the group: its lag in the log, at least the batch it holds. */
  lag: number;
  /** When it last committed a batch, or when this process started it (ms). */
  last_progress_at: number;
  /** Since when it has been stalled (ms), or null when it is not. */
  stalled_since: number | null;
  /** Why it is stalled (no record's values: the failure's kind, class, codes and summary), or null. */
  reason: string | null;
}

export interface ConsumerProgressOptions {
  /** How long records may wait with no batch committed before the group is stalled (ms). */
  stallMs: number;
  /** How often the log's backlog is read (ms); default a quarter of stallMs, from 100 ms to 10 s. */
  pollMs?: number;
  /** Where the lag comes from; without it (or without backlog()), only the batch in hand counts. */
  log?: Pick<RecordLog, 'backlog'> | undefined;
  logger?: ConsumerLogger | undefined;
  now?: () => number;
}

/** What the batch loop tells of its group. */
export interface GroupProgress {
  /** A batch of `records` is in hand (gathered, not committed yet). */
  holding(records: number): void;
  /** A failed attempt to land it, as describeForLog tells it. */
  failed(described: Readonly<Record<string, string | number | boolean>>): void;
  /** The batch in hand is committed: progress. */
  committed(): void;
}

class Group implements GroupProgress {
  readonly name: string;
  #now: () => number;
  lastProgressAt: number;
  held = 0;
  backlogLag = 0;
  waitingSince: number | null = null;
  lastFailure: Readonly<Record<string, string | number | boolean>> | null = null;

  constructor(name: string, now: () => number) {
    this.name = name;
    this.#now = now;
    this.lastProgressAt = now();
  }

  get lag(): number {
    return Math.max(this.backlogLag, this.held);
  }

  /** Keeps `waitingSince` when records wait, from the first moment they were seen to. */
  observe(): void {
    if (this.lag === 0) this.waitingSince = null;
    else this.waitingSince ??= this.#now();
  }

  holding(records: number): void {
    this.held = records;
    this.observe();
  }

  failed(described: Readonly<Record<string, string | number | boolean>>): void {
    this.lastFailure = described;
  }

  committed(): void {
    this.lastProgressAt = this.#now();
    this.held = 0;
    this.lastFailure = null;
    // What the log said was waiting may be what was just committed: the next poll tells.
    this.waitingSince = this.backlogLag > 0 ? this.lastProgressAt : null;
  }
}

/** How a failure reads in a readiness body or the health view: never a record's values. */
function failureText(described: Readonly<Record<string, string | number | boolean>>): string {
  const codes = [
    described.code === undefined ? '' : ` code ${described.code}`,
    described.http_status === undefined ? '' : ` HTTP ${described.http_status}`,
  ].join('');
  const message = described.message === undefined ? '' : `: ${described.message}`;
  return `${described.kind} failure (${described.error}${codes})${message}`;
}

export class ConsumerProgress {
  readonly stallMs: number;
  readonly #groups = new Map<string, Group>();
  readonly #options: ConsumerProgressOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #polls = 0;

  constructor(options: ConsumerProgressOptions) {
    this.#options = options;
    this.stallMs = options.stallMs;
    this.#now = options.now ?? Date.now;
  }

  /** The group's progress, created when first asked for (its clock starts then). */
  group(name: string): GroupProgress {
    let group = this.#groups.get(name);
    if (!group) {
      group = new Group(name, this.#now);
      this.#groups.set(name, group);
    }
    return group;
  }

  /** Starts reading the log's backlog every pollMs (the first read at once). */
  start(): void {
    if (this.#timer || !this.#options.log?.backlog) return;
    const pollMs = this.#options.pollMs ?? Math.min(10_000, Math.max(100, Math.floor(this.stallMs / 4)));
    this.#timer = setInterval(() => void this.poll(), pollMs);
    this.#timer.unref();
    void this.poll();
  }

  /** Stops reading the backlog; resolves once a read in flight has ended. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#polling;
  }

  /** How many reads of the backlog have completed (for tests, which wait for one after a moment). */
  get polls(): number {
    return this.#polls;
  }

  /** Reads the backlog once (one read at a time); a failed read keeps the last lag known. */
  poll(): Promise<void> {
    const backlog = this.#options.log?.backlog;
    if (!backlog) return Promise.resolve();
    this.#polling ??= (async () => {
      try {
        const rows = await backlog.call(this.#options.log, { oldest: false });
        for (const group of this.#groups.values()) {
          group.backlogLag = rows.filter((r) => r.group === group.name).reduce((sum, r) => sum + r.lag, 0);
          group.observe();
        }
        this.#polls += 1;
      } catch (error) {
        this.#options.logger?.warn(
          { error: (error as Error)?.name, message: (error as Error)?.message },
          'consumer lag could not be read from the record log; keeping the last known',
        );
      } finally {
        this.#polling = null;
      }
    })();
    return this.#polling;
  }

  /** Every group's state, now. */
  states(): GroupProgressState[] {
    const now = this.#now();
    return [...this.#groups.values()].map((group) => {
      const since = group.waitingSince === null ? null : Math.max(group.waitingSince, group.lastProgressAt);
      const stalled = since !== null && now - since >= this.stallMs ? since : null;
      const reason =
        stalled === null
          ? null
          : `${group.lag} record${group.lag === 1 ? '' : 's'} waiting, no batch committed for ${Math.floor((now - stalled) / 1000)} s` +
            (group.lastFailure ? `; last failure: ${failureText(group.lastFailure)}` : '');
      return {
        group: group.name,
        lag: group.lag,
        last_progress_at: group.lastProgressAt,
        stalled_since: stalled,
        reason,
      };
    });
  }

  /** Not ready while a group is stalled, saying which and why. */
  async health(): Promise<{ ok: boolean; detail?: string }> {
    const stalled = this.states().filter((s) => s.stalled_since !== null);
    if (stalled.length === 0) return { ok: true };
    return {
      ok: false,
      detail: stalled.map((s) => `consumer group ${s.group} is stalled: ${s.reason}`).join('; '),
    };
  }
}
