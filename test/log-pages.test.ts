// `npm start`'s process does not keep the record log's file pages resident as the log grows: its writer
// reopens the LMDB environment every LOG_REOPEN_BYTES appended, and the process's other handle on it (the
// consumers', in the main thread, when one gateway thread is the writer) closes meanwhile, so that the
// file is unmapped. Events of ~40 KiB are sent until the log holds ~10 MiB, and once every one has landed
// (the consumers read each through the map) ten more, so that the writer reopens after those reads: what
// the process then keeps mapped of the file is what was touched since the last reopen, not the log. With one gateway loop (the thread is the writer, the main thread's
// handle closes when it asks) and, where Node.js has reusePort, two (the main thread is the writer).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { reusePortSupported } from '@tally/gateway';
import { residentKiB } from '@tally/log/testing';
import { FileTokenStore } from '@tally/tokens';
import { expect, it } from 'vitest';
import { eventually, tempDataDir } from './support/processes.ts';
import { publishedWarehouse, send, startTallyProcess } from './support/tally-process.ts';

const RECORDS = 240;

const loops = reusePortSupported() ? ['1', '2'] : ['1'];

it.each(loops)('releases the log file pages its consumers read, with GATEWAY_WORKERS=%s', async (workers) => {
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create('pages', 'public');
  await store.close();
  const tally = await startTallyProcess({
    TALLY_DATA_DIR: dataDir,
    GATEWAY_WORKERS: workers,
    LOG_REOPEN_BYTES: String(256 * 1024),
  });
  const warehouse = await publishedWarehouse(dataDir);
  try {
    const pad = 'x'.repeat(40_000);
    let sent = 0;
    // Sends until `total` events are sent, eight at a time, then waits until every one has landed.
    const sendUntil = async (total: number) => {
      const client = async (worker: number) => {
        while (sent < total) {
          sent += 1;
          const res = await send(tally.url, token, {
            type: 'event',
            data: { session_id: `s${worker}`, event_name: 'big', event_data: { n: sent, pad } },
          });
          expect(res.status).toBe(202);
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, i) => client(i)));
      await eventually(60_000, 'every event landing', async () => {
        const [row] = await warehouse.query<{ n: number }>(
          "SELECT count() AS n FROM events FINAL WHERE project_id = 'pages'",
        );
        return Number(row?.n) === total;
      });
    };
    await sendUntil(RECORDS);
    // Then more than LOG_REOPEN_BYTES: the writer reopens after the consumers have read everything before.
    await sendUntil(RECORDS + 10);
    const file = join(dataDir, 'log', 'records.mdb');
    const logKiB = statSync(file).size / 1024;
    expect(logKiB).toBeGreaterThan(9 * 1024);
    // ~1 MiB stays: what the last records took. Without the release, every page read stays: the whole log.
    expect(residentKiB(file, tally.process.pid as number)).toBeLessThan(logKiB / 4);
  } finally {
    await warehouse.close();
    expect(await tally.stop()).toBe(0);
  }
});
