// Appending imported revenue records to the record log, shared by `tally import csv` and `tally import
// stripe`: the records go in as the gateway appends accepted requests (batches of 500), and the revenue
// consumer lands them with its first-copy rules (record id, then transaction id), so landing the same
// records again adds nothing. The embedded log has one writer: while `npm start` holds it, the import is
// refused with a message that says what to do.
import type { TallyConfig } from '@tally/config';
import type { IngestRecordOf } from '@tally/contract';
import { EmbeddedLogLockedError, openRecordLog } from '@tally/log';

export type RecordLogWriter = Awaited<ReturnType<typeof openRecordLog>>;

/** The record log opened as its writer, or an error telling the operator the gateway holds it. */
export async function openImportLog(config: TallyConfig): Promise<RecordLogWriter> {
  try {
    return await openRecordLog(config, { writer: true });
  } catch (error) {
    if (error instanceof EmbeddedLogLockedError)
      throw new Error(
        `${error.message}: the running gateway holds the record log; stop it, or send the records to its /api/ingest`,
      );
    throw error;
  }
}

/** Appends `records` in batches of 500. */
export async function appendRevenueRecords(
  log: RecordLogWriter,
  records: Array<IngestRecordOf<'revenue'>>,
): Promise<void> {
  for (let i = 0; i < records.length; i += 500) await log.append(records.slice(i, i + 500));
}
