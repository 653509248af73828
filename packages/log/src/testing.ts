// Builders of records as the gateway appends them and of messages as a consumer polls them, for tests
// (`@tally/log/testing`, source only): each test says only what matters to it, and a field added to
// IngestRecord is added here once. Defaults: project 'p', visitor 'v', session 's', received and dated now,
// no client timestamp, no user agent, country null; a record dated by `timestamp` alone was received then.
import { randomUUID } from 'node:crypto';
import type { IngestRecord, IngestRecordOf, RecordType } from '@tally/contract';
import type { LogMessage, LogPosition } from './record-log.ts';

/** What a test sets of a record: any envelope field, and `data` (merged over the builder's defaults). */
export type RecordOverrides<T extends RecordType> = Partial<Omit<IngestRecordOf<T>, 'type' | 'data'>> & {
  /** Payload fields; a test may send what the contract refuses (a dead letter's record). */
  data?: Record<string, unknown>;
};

/** The payload fields every builder fills in unless told otherwise. */
const DEFAULT_DATA: Record<RecordType, () => Record<string, unknown>> = {
  pageview: () => ({ visitor_fingerprint: 'v', session_id: 's', url: 'https://example.com/' }),
  event: () => ({ visitor_fingerprint: 'v', session_id: 's', event_name: 'signup' }),
  identify: () => ({ visitor_fingerprint: 'v', session_id: 's', customer_id: 'c' }),
  revenue: () => ({
    visitor_fingerprint: 'v',
    session_id: 's',
    customer_id: 'c',
    amount: 1,
    transaction_id: randomUUID(),
  }),
};

/**
 * A record of `type` with exactly `overrides.data` as its payload (no defaults: for records whose payload
 * is the point of the test), and the envelope's defaults for what `overrides` leaves out.
 */
export function anIngestRecord<T extends RecordType>(
  type: T,
  overrides: RecordOverrides<T> = {},
): IngestRecordOf<T> {
  const { data = {}, ...envelope } = overrides;
  const timestamp = envelope.timestamp ?? envelope.received_at ?? Date.now();
  const record = {
    id: randomUUID(),
    type,
    project_id: 'p',
    received_at: timestamp,
    timestamp,
    client_timestamp: null,
    timestamp_clamped: false,
    user_agent: null,
    visitor_fingerprint_derived: false,
    country: null,
    ...envelope,
    data,
  };
  // The one cast of the builders: a test may build a payload the contract refuses.
  return record as IngestRecordOf<T>;
}

const withDefaults = <T extends RecordType>(type: T, overrides: RecordOverrides<T>): IngestRecordOf<T> =>
  anIngestRecord(type, { ...overrides, data: { ...DEFAULT_DATA[type](), ...overrides.data } });

/** A pageview (of https://example.com/ unless `data` says otherwise). */
export const aPageview = (overrides: RecordOverrides<'pageview'> = {}) => withDefaults('pageview', overrides);
/** A custom event ('signup' unless `data.event_name` says otherwise). */
export const anEvent = (overrides: RecordOverrides<'event'> = {}) => withDefaults('event', overrides);
/** An identify of customer 'c'. */
export const anIdentify = (overrides: RecordOverrides<'identify'> = {}) =>
  withDefaults('identify', overrides);
/** A revenue record of 1 (USD by default) from customer 'c', with a transaction id of its own. */
export const aRevenueRecord = (overrides: RecordOverrides<'revenue'> = {}) =>
  withDefaults('revenue', overrides);

/** `record` as a consumer polls it: in its type's topic, at partition 0 and offset 0 unless told otherwise. */
export function aPolledMessage(record: IngestRecord, position: Partial<LogPosition> = {}): LogMessage {
  return { topic: record.type, partition: 0, offset: 0, ...position, record };
}
