// Reads the records a real gateway process made durable, straight from the embedded record log in its
// TALLY_DATA_DIR (LMDB lets this second process read while the gateway writes). Each read uses a new
// consumer group, so it sees every record from the start and commits nothing.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { IngestRecord } from '@tally/contract';
import { openEmbeddedLog } from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { eventually } from './processes.ts';

export interface RecordReader {
  all(): Promise<IngestRecord[]>;
  /** Polls until `select` picks at least `count` records (default 1), then returns them. */
  waitFor(what: string, select: (record: IngestRecord) => boolean, count?: number): Promise<IngestRecord[]>;
  close(): Promise<void>;
}

export function openRecordReader(dataDir: string): RecordReader {
  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  async function all(): Promise<IngestRecord[]> {
    const consumer = log.consumer({ group: `sdk-test-${randomUUID()}` });
    const records: IngestRecord[] = [];
    for (let round = 0; round < 1000; round++) {
      const batch = await consumer.poll({ max: 1000 });
      if (batch.length === 0) break;
      for (const message of decodedOnly(batch)) records.push(message.record);
    }
    await consumer.close();
    return records;
  }
  return {
    all,
    async waitFor(what, select, count = 1) {
      let found: IngestRecord[] = [];
      await eventually(20_000, what, async () => {
        found = (await all()).filter(select);
        return found.length >= count;
      });
      return found;
    },
    close: () => log.close(),
  };
}
