// Builders of records as the gateway appends them and of messages as a consumer polls them, for tests
// (`@tally/log/testing`, source only): each test says only what matters to it, and a field added to
// IngestRecord is added here once. Defaults: project 'conformance', visitor 'v1', session 's1', received and
// dated now (each set on its own), no client timestamp, user agent 'vitest', country 'DE', region
// 'Bavaria' and city 'Munich' (null for revenue, which servers send). The record-log conformance suite's
// testRecord is built on them.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IngestRecord, IngestRecordOf, RecordType } from '@tally/contract';
import {
  type LogConsumer,
  type LogMessage,
  type LogPosition,
  OwnershipLostError,
  type RecordLog,
} from './record-log.ts';

/** The record of a type; of each of them for a union of types. */
export type RecordOf<T extends RecordType> = T extends RecordType ? IngestRecordOf<T> : never;

/** What a test sets of a record: any envelope field, and `data` (merged over the builder's defaults). */
export type RecordOverrides<T extends RecordType> = Partial<Omit<IngestRecordOf<T>, 'type' | 'data'>> & {
  /** Payload fields; a test may send what the contract refuses (a dead letter's record). */
  data?: Record<string, unknown>;
};

/** The payload fields every builder fills in unless told otherwise. */
const DEFAULT_DATA: Record<RecordType, () => Record<string, unknown>> = {
  pageview: () => ({
    session_id: 's1',
    visitor_fingerprint: 'v1',
    url: 'https://example.com/',
    screen_width: 1440,
  }),
  event: () => ({
    session_id: 's1',
    visitor_fingerprint: 'v1',
    event_name: 'signup',
    event_data: { plan: 'pro' },
  }),
  identify: () => ({ session_id: 's1', visitor_fingerprint: 'v1', customer_id: 'c1' }),
  revenue: () => ({
    session_id: 's1',
    visitor_fingerprint: 'v1',
    customer_id: 'c1',
    amount: 10,
    currency: 'USD',
    transaction_id: randomUUID(),
    metadata: { plan: 'pro' },
  }),
};

/**
 * A record of `type` with exactly `overrides.data` as its payload (no defaults: for records whose payload
 * is the point of the test), and the envelope's defaults for what `overrides` leaves out.
 */
export function anIngestRecord<T extends RecordType>(
  type: T,
  overrides: RecordOverrides<T> = {},
): RecordOf<T> {
  const { data = {}, ...envelope } = overrides;
  const now = Date.now();
  const record = {
    id: randomUUID(),
    type,
    project_id: 'conformance',
    received_at: now,
    timestamp: now,
    client_timestamp: null,
    timestamp_clamped: false,
    user_agent: 'vitest',
    visitor_fingerprint_derived: false,
    country: type === 'revenue' ? null : 'DE',
    region: type === 'revenue' ? null : 'Bavaria',
    city: type === 'revenue' ? null : 'Munich',
    ...envelope,
    data,
  };
  // The one cast of the builders: a test may build a payload the contract refuses.
  return record as RecordOf<T>;
}

/** A record of `type`: the defaults, with `overrides` (`data` merged over the default payload). */
export function aRecord<T extends RecordType>(type: T, overrides: RecordOverrides<T> = {}): RecordOf<T> {
  return anIngestRecord(type, { ...overrides, data: { ...DEFAULT_DATA[type](), ...overrides.data } });
}

/** A pageview of https://example.com/ (unless `data` says otherwise). */
export const aPageview = (overrides: RecordOverrides<'pageview'> = {}) => aRecord('pageview', overrides);
/** A custom event, 'signup' with plan 'pro' (unless `data` says otherwise). */
export const anEvent = (overrides: RecordOverrides<'event'> = {}) => aRecord('event', overrides);
/** An identify of customer 'c1'. */
export const anIdentify = (overrides: RecordOverrides<'identify'> = {}) => aRecord('identify', overrides);
/** A revenue record of 10 USD from customer 'c1', with a transaction id of its own. */
export const aRevenueRecord = (overrides: RecordOverrides<'revenue'> = {}) => aRecord('revenue', overrides);

/** A log's consumers' hold on their partitions, as a test sets it (withHolding). */
export interface TestHolding {
  /** What their holding() answers: change it as a rebalance that gave the partitions back would. */
  id: number;
  /** Their partitions are another member's: assertHeld throws OwnershipLostError. */
  lost: boolean;
}

/**
 * `log` with its consumers' holding of their partitions set by the test, as a member of a Kafka group sees
 * rebalances: a log whose group has one consumer (the embedded one) keeps one holding for ever.
 */
export function withHolding(log: RecordLog): { log: RecordLog; holding: TestHolding } {
  const holding: TestHolding = { id: 1, lost: false };
  const held = (inner: LogConsumer): LogConsumer => ({
    poll: (options) => inner.poll(options),
    commit: (messages) => inner.commit(messages),
    assertHeld: (messages) => {
      if (holding.lost) throw new OwnershipLostError();
      inner.assertHeld(messages);
    },
    holding: () => holding.id,
    close: () => inner.close(),
  });
  const watched = new Proxy(log, {
    get(target, key) {
      if (key === 'consumer') return (options: { group: string }) => held(target.consumer(options));
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { log: watched, holding };
}

/** `record` as a consumer polls it: in its type's topic, at partition 0 and offset 0 unless told otherwise. */
export function aPolledMessage(record: IngestRecord, position: Partial<LogPosition> = {}): LogMessage {
  return { topic: record.type, partition: 0, offset: 0, ...position, record };
}

/**
 * Resident KiB of a process's mappings of `file` (its /proc/<pid>/smaps; this process by default): how
 * much of the log's file stays mapped, for the tests of releasing its pages.
 */
export function residentKiB(file: string, pid: number | 'self' = 'self'): number {
  let inFile = false;
  let kib = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(file);
    else if (inFile && line.startsWith('Rss:')) kib += Number(line.split(/\s+/)[1]);
  }
  return kib;
}
