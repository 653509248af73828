// The record log of a dashboard that runs as its own process, for the health view: opened from the
// configuration (Kafka: the admin client and the dead-letter topic; embedded: the log's directory as a
// reader beside its writer, which LMDB allows across processes) at the first health request, not at start,
// so that the dashboard starts while the log is away; a failed open is tried again at the next request.
// @tally/log is imported then too: a dashboard handed a log (npm start) never loads it again. An embedded
// log that is not in TALLY_DATA_DIR (a dashboard on another machine) is not created empty, which would
// show no lag: the health view reports the log unavailable instead.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TallyConfig } from '@tally/config';
import type { HealthLog } from './deps.ts';

type OpenedLog = Required<Omit<HealthLog, 'checkSettings'>> &
  Pick<HealthLog, 'checkSettings'> & { close(): Promise<void> };

export interface OwnHealthLog extends Required<Omit<HealthLog, 'checkSettings'>> {
  /** With Kafka configured: its topics' settings against the configuration. */
  checkSettings?: HealthLog['checkSettings'];
  close(): Promise<void>;
}

export function ownHealthLog(config: TallyConfig): OwnHealthLog {
  let opening: Promise<OpenedLog> | null = null;
  let closed = false;
  const kafka = config.backends.log.kind === 'kafka';
  const log = (): Promise<OpenedLog> => {
    if (closed) return Promise.reject(new Error('closed'));
    opening ??= (async () => {
      if (!kafka && !existsSync(join(config.dataDir, 'log', 'records.mdb'))) {
        throw new Error(`no embedded record log in ${config.dataDir} and no Kafka configured`);
      }
      const { openRecordLog } = await import('@tally/log');
      // A reader: no writer lock, and no retention passes (the writer runs them).
      return (await openRecordLog(config, { reader: true })) as OpenedLog;
    })().catch((error) => {
      opening = null;
      throw error;
    });
    return opening;
  };
  return {
    deadLetters: { list: async () => (await log()).deadLetters.list() },
    backlog: async () => (await log()).backlog(),
    // Only Kafka's topics have settings to compare (the embedded log has none).
    ...(kafka && {
      checkSettings: async () => {
        const opened = await log();
        if (!opened.checkSettings) throw new Error('the record log has no settings to compare');
        return opened.checkSettings();
      },
    }),
    async close() {
      closed = true;
      await (await opening?.catch(() => null))?.close();
    },
  };
}
