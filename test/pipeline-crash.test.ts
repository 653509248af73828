// A consumer killed with SIGKILL in the middle of its work loses nothing and duplicates nothing: load
// `npm start`'s process with pageviews whose ids the client chose, kill -9 it once its analytics
// consumer has landed batches (more are in flight: batches of 20 while the load goes on), start it again
// on the same data directory, and find every acknowledged record exactly once in the warehouse.
import { randomUUID } from 'node:crypto';
import { FileTokenStore } from '@tally/tokens';
import { expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineBackends,
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
} from './support/tally-process.ts';

// On the embedded log, and on Kafka (where the restarted consumer resumes from the group's committed offsets).
// The embedded log with two gateway event loops (where Node.js has reusePort; one elsewhere): the killed
// process's writer is its main thread, fed by both loops (or the one loop's thread, beside the consumers'
// handle in the main thread), and every 202 must still be in the log. Its writer reopens the environment
// every 16 KiB appended (LOG_REOPEN_BYTES), the consumers' reads and commits waiting meanwhile, so the
// kill comes among reopens.
const backends = pipelineBackends().map(([name, env]) =>
  name === 'the embedded log'
    ? ([
        'the embedded log (GATEWAY_WORKERS=2)',
        () => ({ ...env(), GATEWAY_WORKERS: '2', LOG_REOPEN_BYTES: String(16 * 1024) }),
      ] as const)
    : ([name, env] as const),
);

it.each(
  backends,
)('lands every acknowledged record exactly once when the consumer is killed mid-batch and restarted, on %s', async (_name, backendEnv) => {
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create('crash', 'public');
  await store.close();
  const env = {
    TALLY_DATA_DIR: dataDir,
    CONSUMER_BATCH_SIZE: '20',
    CONSUMER_BATCH_WAIT_MS: '20',
    ...backendEnv(),
  };
  const first = await startTallyProcess({ ...env, LOG_LEVEL: 'info' });

  const acknowledged = new Set<string>();
  let sent = 0;
  let killed = false;
  const MAX_REQUESTS = 4000; // bounded load, stopped by the kill long before this
  const landedBatches = () => first.output().split('analytics batch landed').length - 1;
  async function client(worker: number) {
    while (!killed && sent < MAX_REQUESTS) {
      const id = randomUUID();
      sent++;
      try {
        const res = await send(first.url, token, {
          type: 'pageview',
          id,
          data: {
            visitor_fingerprint: `v${worker}`,
            session_id: `s${worker}`,
            url: `https://shop.example/${sent}`,
          },
        });
        if (res.status === 202) acknowledged.add(id);
      } catch {
        // connection reset by the kill: not acknowledged, so the client would retry it
      }
      if (!killed && acknowledged.size >= 300 && landedBatches() >= 3) {
        killed = true;
        first.process.kill('SIGKILL');
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, i) => client(i)));
  expect(killed).toBe(true);
  expect(await first.stop('SIGKILL')).toBe(null); // ended by the signal

  const second = await startTallyProcess(env);
  const warehouse = await publishedWarehouse(dataDir);
  try {
    let copies = new Map<string, number>();
    await eventually(60_000, 'every acknowledged record landing', async () => {
      const rows = await warehouse.query<{ id: string; copies: number }>(
        "SELECT id, count() AS copies FROM events FINAL WHERE project_id = 'crash' GROUP BY id",
      );
      copies = new Map(rows.map((r) => [r.id, r.copies]));
      return [...acknowledged].every((id) => copies.has(id));
    });
    expect([...copies.values()].filter((n) => n !== 1)).toEqual([]);
    const [views] = await warehouse.query<{ pageviews: number; ids: number }>(
      "SELECT count() AS pageviews, uniqExact(id) AS ids FROM pageviews WHERE project_id = 'crash'",
    );
    expect(views?.pageviews).toBe(views?.ids);
    expect(views?.pageviews).toBeGreaterThanOrEqual(acknowledged.size);
  } finally {
    await warehouse.close();
    expect(await second.stop('SIGTERM')).toBe(0);
  }

  // Stopped, the process no longer holds the embedded warehouse: the CLI opens it directly.
  const out = await tally(
    ['sql', "SELECT uniqExact(id) AS ids FROM events WHERE project_id = 'crash'"],
    pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  );
  expect(JSON.parse(out).ids).toBeGreaterThanOrEqual(acknowledged.size);
});
