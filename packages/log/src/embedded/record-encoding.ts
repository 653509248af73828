// A record as the embedded log stores it, encoded where it is made: a gateway thread encodes its records
// and hands the thread that holds the log their bytes (thread/append-port.ts), which writes them as they
// are (EmbeddedRecordLog.appendEncoded), instead of copying every record's objects across threads (a
// structured clone out, one in) and encoding them there. The writer thread is the one all loops share, so
// what it no longer does is taken off the busiest thread. The log's own append() encodes with the same
// function, so a record's bytes are the same whichever way it came.
//
// The stored value is framed with a checksum, so that bytes damaged on disk are never read as a record:
//
//   0xC1 | version (1) | CRC-32 of the payload (4 bytes, big-endian) | payload (the record in MessagePack)
//
// 0xC1 is the one byte MessagePack never uses ("never used" in the spec), so it cannot begin a value of
// the records written before the frame existed: those are the MessagePack of the record alone (lmdb-js's
// encoding of an object, which always starts with a map or, msgpackr's records, an extension byte). So a
// value that starts with 0xC1 is framed and its checksum is checked; any other is read as such an older
// record, which carries no checksum (it must still decode exactly, to its last byte, and be a record of its
// topic). CRC-32 is zlib's (`zlib.crc32`, Node.js 20.15 and 22.2 on, native): no dependency, and it finds
// every burst of up to 32 flipped bits and all but 1 in 2^32 of other damage, which is what is asked of
// it here (damage on disk, not an adversary: whoever can write the file can also write a new checksum).
// CRC-32C would be no better at this and needs a package.
// The payload is what lmdb-js itself would write for the record: msgpackr's Encoder made with
// `copyBuffers: true`, as lmdb-js makes a database's encoder without shared structures, so each message
// carries its own record structures and no state passes from one to the next. The frame's six bytes are
// reserved at the start of the encoder's buffer (msgpackr's RESERVE_START_SPACE), so framing copies
// nothing. record-encoding.test.ts holds the bytes equal between both ways of appending, and reads back.
import { crc32 } from 'node:zlib';
import type { IngestRecord, RecordType } from '@tally/contract';
import { Encoder, RESERVE_START_SPACE } from 'msgpackr';

/** A record's type (its topic) and its encoding, as EmbeddedRecordLog.appendEncoded writes it. */
export interface EncodedRecord {
  type: RecordType;
  bytes: Uint8Array;
}

/** The first byte of a framed record: MessagePack's unused 0xC1, which no older (unframed) record has. */
export const FRAME_MARKER = 0xc1;
/** The frame's version: 1, a CRC-32 of the payload. */
export const FRAME_VERSION = 1;
const HEADER = 6;

const encoder = new Encoder({ copyBuffers: true });

/**
 * The record's bytes as the embedded log stores it (framed, with its checksum). The result is a view of
 * the encoder's buffer, which the encoder never writes over (the next record goes after it, or into a new
 * buffer): lmdb-js keeps a pointer to the value until its transaction is written, and append-port.ts
 * copies a turn's records into one buffer of their own to transfer it.
 */
export function encodeRecord(record: IngestRecord): Uint8Array {
  const bytes = encoder.encode(record, RESERVE_START_SPACE | HEADER) as Uint8Array;
  bytes[0] = FRAME_MARKER;
  bytes[1] = FRAME_VERSION;
  const sum = crc32(bytes.subarray(HEADER));
  bytes[2] = sum >>> 24;
  bytes[3] = (sum >>> 16) & 0xff;
  bytes[4] = (sum >>> 8) & 0xff;
  bytes[5] = sum & 0xff;
  return bytes;
}

/** A stored value that is not a record: damaged bytes, or not a record at all. */
export class UndecodableRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UndecodableRecordError';
  }
}

/**
 * The record a stored value holds: a framed one whose checksum matches, or an older unframed one that
 * decodes exactly. Throws UndecodableRecordError otherwise. `topic`, when given, is where the value was
 * read: a record of another type there is not one of this log's records either.
 */
export function decodeRecord(bytes: Uint8Array, topic?: RecordType): IngestRecord {
  const framed = bytes[0] === FRAME_MARKER;
  if (framed) {
    if (bytes.length < HEADER) throw new UndecodableRecordError('stored record shorter than its frame');
    if (bytes[1] !== FRAME_VERSION) {
      throw new UndecodableRecordError(`stored record of unknown frame version ${bytes[1]}`);
    }
    const want =
      (((bytes[2] as number) << 24) |
        ((bytes[3] as number) << 16) |
        ((bytes[4] as number) << 8) |
        (bytes[5] as number)) >>>
      0;
    const got = crc32(bytes.subarray(HEADER));
    if (got !== want) {
      throw new UndecodableRecordError(
        `stored record damaged: checksum ${hex(got)} where ${hex(want)} was written`,
      );
    }
  }
  let record: unknown;
  try {
    // From the payload's start in the value itself: a subarray to decode would cost a new view per record.
    record = framed ? encoder.decode(bytes, { start: HEADER }) : encoder.decode(bytes);
  } catch (error) {
    throw new UndecodableRecordError(`stored record does not decode: ${(error as Error).message}`);
  }
  const shaped = record as Partial<IngestRecord> | null;
  if (
    typeof shaped !== 'object' ||
    shaped === null ||
    typeof shaped.id !== 'string' ||
    typeof shaped.type !== 'string' ||
    (topic !== undefined && shaped.type !== topic)
  ) {
    throw new UndecodableRecordError(`stored value is not a ${topic ?? 'log'} record`);
  }
  return record as IngestRecord;
}

const hex = (n: number) => n.toString(16).padStart(8, '0');
