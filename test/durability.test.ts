// A record answered 202 survives `kill -9` of the gateway: load the gateway with records whose ids the
// client chose, SIGKILL it mid-load, reopen the log, and find every acknowledged id there. The gateway
// reopens its log's environment every 16 KiB appended (LOG_REOPEN_BYTES; 64 MiB by default), so the kill
// comes among reopens, some appends waiting for one.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import { expect, it } from 'vitest';
import { startGatewayProcess, tempDataDir } from './support/processes.ts';

it('keeps every record acknowledged with 202 when the gateway is killed with SIGKILL mid-load', async () => {
  const dataDir = tempDataDir();
  const { token } = await new FileTokenStore(dataDir).create('durability', 'secret');
  const gateway = await startGatewayProcess({
    TALLY_DATA_DIR: dataDir,
    RATE_LIMIT_PER_HOUR: '1000000',
    LOG_REOPEN_BYTES: String(16 * 1024),
  });

  const acknowledged = new Set<string>();
  let sent = 0;
  const KILL_AFTER = 400;
  const MAX_REQUESTS = 5000; // bounded load, stopped by the kill long before this
  let killed = false;

  async function client(worker: number) {
    while (!killed && sent < MAX_REQUESTS) {
      const id = randomUUID();
      sent++;
      const type = worker % 2 ? 'event' : 'revenue';
      const data =
        type === 'event'
          ? { session_id: `s${worker}`, event_name: 'load' }
          : {
              visitor_fingerprint: 'v',
              session_id: 's',
              customer_id: `c${worker}`,
              amount: 1,
              transaction_id: id,
            };
      try {
        const res = await fetch(`${gateway.url}/api/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-token': token },
          body: JSON.stringify({ type, id, data }),
        });
        if (res.status === 202) acknowledged.add(id);
      } catch {
        // connection reset by the kill: not acknowledged, so the client would retry it
      }
      if (acknowledged.size >= KILL_AFTER && !killed) {
        killed = true;
        gateway.process.kill('SIGKILL');
      }
    }
  }
  await Promise.all(Array.from({ length: 16 }, (_, i) => client(i)));
  expect(await gateway.stop('SIGKILL')).toBe(null); // exited by the signal, not on its own
  expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER);

  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  const consumer = log.consumer({ group: 'durability-check' });
  const found = new Set<string>();
  for (
    let batch = await consumer.poll({ max: 1000 });
    batch.length > 0;
    batch = await consumer.poll({ max: 1000 })
  ) {
    for (const m of decodedOnly(batch)) found.add(m.record.id);
  }
  await log.close();
  const missing = [...acknowledged].filter((id) => !found.has(id));
  expect(missing).toEqual([]);
});
