// Appends through a MessagePort to a real embedded log served in this thread: each resolves only once its
// record is durable and readable, the appends of one event-loop turn travel as one message (so they share
// one group commit), and a failure of the serving log, or its port going away, rejects with
// LogUnavailableError (the gateway's 503) instead of leaving requests waiting.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly } from '../conformance.ts';
import { openEmbeddedLog } from '../embedded/embedded-log.ts';
import { LogUnavailableError, type RecordLog } from '../record-log.ts';
import { aPageview } from '../testing.ts';
import { appendThroughPort, serveAppends } from './append-port.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (i: number) =>
  aPageview({ id: `0190f5e4-5f6a-7000-8000-${String(i).padStart(12, '0')}`, project_id: 'p' });

it('appends through the port: durable when resolved, one message per turn', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-port-'));
  dirs.push(dir);
  const log = openEmbeddedLog({ path: join(dir, 'log'), writer: true });
  let batches = 0;
  const counting: RecordLog = {
    consumer: (o) => log.consumer(o),
    deadLetters: log.deadLetters,
    health: () => log.health(),
    close: () => log.close(),
    append: (records) => {
      batches++;
      return log.append(records);
    },
  };
  const { port1, port2 } = new MessageChannel();
  serveAppends(counting, port1);
  const remote = appendThroughPort(port2);
  await Promise.all(Array.from({ length: 20 }, (_, i) => remote.append([record(i)])));
  expect(batches).toBe(1);
  const consumer = log.consumer({ group: 'g' });
  expect(decodedOnly(await consumer.poll({ max: 100 })).map((m) => m.record.id)).toEqual(
    Array.from({ length: 20 }, (_, i) => record(i).id),
  );
  expect(await remote.health()).toEqual({ ok: true });
  await remote.close();
  port1.close();
  await log.close();
});

it('rejects with LogUnavailableError when the log fails, and when the serving side goes away', async () => {
  const failing = {
    append: () => Promise.reject(new Error('disk full')),
    health: () => Promise.resolve({ ok: false, detail: "no space left on the record log's disk" }),
  } as unknown as RecordLog;
  const { port1, port2 } = new MessageChannel();
  serveAppends(failing, port1);
  const remote = appendThroughPort(port2);
  const failed = remote.append([record(1)]);
  await expect(failed).rejects.toBeInstanceOf(LogUnavailableError);
  await expect(failed).rejects.toThrow('Error: disk full');
  // Its health is the held log's own.
  expect(await remote.health()).toEqual({ ok: false, detail: "no space left on the record log's disk" });

  // A log that never answers, then its port closes: the waiting append is rejected, not left hanging.
  const silent = new MessageChannel();
  const orphan = appendThroughPort(silent.port2);
  const waiting = orphan.append([record(2)]);
  await new Promise((resolve) => setImmediate(resolve));
  silent.port1.close();
  await expect(waiting).rejects.toBeInstanceOf(LogUnavailableError);
  expect(await orphan.health()).toEqual({ ok: false, detail: 'the thread holding the record log is gone' });
  port1.close();
});

it('hands the embedded log the encoded records (appendEncoded), never their objects', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-port-'));
  dirs.push(dir);
  const log = openEmbeddedLog({ path: join(dir, 'log'), writer: true });
  let encodedBatches = 0;
  const serving = Object.assign(Object.create(log) as typeof log, {
    append: () => Promise.reject(new Error('append of objects: the records should have come encoded')),
    appendEncoded: (records: Parameters<typeof log.appendEncoded>[0]) => {
      encodedBatches++;
      return log.appendEncoded(records);
    },
  });
  const { port1, port2 } = new MessageChannel();
  serveAppends(serving, port1);
  const remote = appendThroughPort(port2);
  await Promise.all(Array.from({ length: 10 }, (_, i) => remote.append([record(i)])));
  expect(encodedBatches).toBe(1);
  const consumer = log.consumer({ group: 'g' });
  expect((await consumer.poll({ max: 100 })).map((m) => m.record)).toEqual(
    Array.from({ length: 10 }, (_, i) => record(i)).map((r) => ({
      ...r,
      received_at: expect.any(Number),
      timestamp: expect.any(Number),
    })),
  );
  await remote.close();
  port1.close();
  await log.close();
});
