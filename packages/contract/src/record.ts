// The record the gateway appends to the record log for each accepted request: the validated payload plus
// the envelope metadata the server adds. Consumers, the Avro schemas and the warehouse read this shape.
import type { PayloadByType, RecordType } from './schemas.ts';

export interface IngestRecordOf<T extends RecordType> {
  /** Record id: the client's envelope `id` when given (idempotent retries), else a UUIDv7 from the gateway. */
  id: string;
  type: T;
  project_id: string;
  /** When the gateway accepted the record, in ms since the Unix epoch. */
  received_at: number;
  /** Event time in ms: the client's timestamp, or received_at when absent or clamped. */
  timestamp: number;
  /** The timestamp the client sent, unchanged (null when absent). */
  client_timestamp: number | null;
  /** True when the client's timestamp was too far in the future and was replaced by received_at. */
  timestamp_clamped: boolean;
  user_agent: string | null;
  /** True when visitor_fingerprint was derived by the server (the client sent none). */
  visitor_fingerprint_derived: boolean;
  /**
   * ISO 3166-1 alpha-2 country of the client's IP, looked up by the gateway (the IP itself is never kept);
   * null when unknown, for revenue records (sent by servers), and absent in records of older gateways.
   */
  country?: string | null;
  /**
   * The first-level subdivision (state, region) and the city of the client's IP, as the gateway's IP
   * database names them (GEO_DATABASE=city); null when unknown or not looked up, absent in older records.
   */
  region?: string | null;
  city?: string | null;
  /** The validated payload; visitor_fingerprint is filled in when derived. */
  data: PayloadByType[T];
}

export type IngestRecord = { [T in RecordType]: IngestRecordOf<T> }[RecordType];

/** The envelope metadata of a record in the log, in order: what the Avro schemas carry beside `data`. */
export const RECORD_ENVELOPE_FIELDS = [
  'id',
  'project_id',
  'received_at',
  'timestamp',
  'client_timestamp',
  'timestamp_clamped',
  'user_agent',
  'visitor_fingerprint_derived',
  'country',
  'region',
  'city',
] as const satisfies ReadonlyArray<keyof IngestRecordOf<RecordType>>;

/** A country as records carry it: ISO 3166-1 alpha-2, upper case. */
export const COUNTRY_PATTERN = /^[A-Z]{2}$/;
