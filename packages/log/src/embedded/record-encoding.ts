// A record as the embedded log stores it, encoded where it is made: a gateway thread encodes its records
// and hands the thread that holds the log their bytes (thread/append-port.ts), which writes them as they
// are (EmbeddedRecordLog.appendEncoded), instead of copying every record's objects across threads (a
// structured clone out, one in) and encoding them there. The writer thread is the one all loops share, so
// what it no longer does is taken off the busiest thread.
// The bytes must be exactly what the log would have written for the record itself: lmdb-js encodes a
// database's values with msgpackr's Encoder, made with `copyBuffers: true` when the database has no shared
// structures (the log opens its databases without any), so an Encoder made the same way writes the same
// bytes: every message carries its own record structures, and no state passes from one to the next.
// record-encoding.test.ts holds this against the log's own writes and reader.
import type { IngestRecord, RecordType } from '@tally/contract';
import { Encoder } from 'msgpackr';

/** A record's type (its topic) and its encoding, as EmbeddedRecordLog.appendEncoded writes it. */
export interface EncodedRecord {
  type: RecordType;
  bytes: Uint8Array;
}

const encoder = new Encoder({ copyBuffers: true });

/**
 * The record's bytes as the embedded log stores it. The result is a view of the encoder's buffer, valid
 * until copied: append-port.ts copies a turn's records into one buffer of their own to transfer it.
 */
export function encodeRecord(record: IngestRecord): Uint8Array {
  return encoder.encode(record);
}

/** Decodes what encodeRecord encoded (for a log that takes only records: append-port.ts's fallback). */
export function decodeRecord(bytes: Uint8Array): IngestRecord {
  return encoder.decode(bytes) as IngestRecord;
}
