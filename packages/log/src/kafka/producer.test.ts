// The Kafka log's batching without a broker: the send is injected, so linger, full batches, the bound on
// waiting messages and failures are checked exactly. The linger is a timer: vitest's fake timers move it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LogUnavailableError } from '../record-log.ts';
import { LingerBatcher, type OutgoingMessage, type SendBatch } from './producer.ts';

const message = (topic: string, n: number): OutgoingMessage => ({
  topic,
  key: `k${n}`,
  value: Buffer.from(String(n)),
});

/** A send that records each produce request and resolves it when told. */
function controlledSend() {
  const requests: Array<{ topics: string[]; count: number; resolve(): void; reject(e: unknown): void }> = [];
  const send: SendBatch = (topicMessages) =>
    new Promise((resolve, reject) => {
      requests.push({
        topics: topicMessages.map((t) => t.topic),
        count: topicMessages.reduce((n, t) => n + t.messages.length, 0),
        resolve: () => resolve(undefined),
        reject,
      });
    });
  return { send, requests };
}

/** Runs the timers due now and the callbacks they start. */
const tick = () => vi.advanceTimersByTimeAsync(0);

describe('LingerBatcher', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gathers the messages of one linger into one produce request, grouped by topic', async () => {
    const { send, requests } = controlledSend();
    const batcher = new LingerBatcher(send, { lingerMs: 20 });
    const sent = [batcher.send([message('a', 1)]), batcher.send([message('b', 2), message('a', 3)])];
    await tick();
    expect(requests).toHaveLength(0); // still lingering
    await vi.advanceTimersByTimeAsync(20);
    expect(requests).toEqual([expect.objectContaining({ topics: ['a', 'b'], count: 3 })]);
    requests[0]?.resolve();
    await Promise.all(sent);
  });

  it('sends a full batch at once, without waiting for the linger', async () => {
    const { send, requests } = controlledSend();
    const batcher = new LingerBatcher(send, { lingerMs: 60_000, maxBatchRecords: 3 });
    const sent = batcher.send([message('a', 1), message('a', 2), message('a', 3)]);
    await tick();
    expect(requests.map((r) => r.count)).toEqual([3]);
    requests[0]?.resolve();
    await sent;
    await batcher.close();
  });

  it('resolves an append only when the brokers acknowledged it', async () => {
    const { send, requests } = controlledSend();
    const batcher = new LingerBatcher(send, { lingerMs: 0 });
    let done = false;
    const sent = batcher.send([message('a', 1)]).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(10);
    expect(done).toBe(false);
    requests[0]?.resolve();
    await sent;
    expect(done).toBe(true);
  });

  it('refuses at once what would put more than the bound waiting, and accepts again once it drains', async () => {
    const { send, requests } = controlledSend();
    const batcher = new LingerBatcher(send, { lingerMs: 0, maxPendingRecords: 2 });
    const first = batcher.send([message('a', 1), message('a', 2)]);
    expect(batcher.pending).toBe(2);
    await expect(batcher.send([message('a', 3)])).rejects.toBeInstanceOf(LogUnavailableError);
    await tick();
    requests[0]?.resolve();
    await first;
    expect(batcher.pending).toBe(0);
    const later = batcher.send([message('a', 4)]);
    await tick();
    requests[1]?.resolve();
    await later;
  });

  it('fails every append of a failed produce request with LogUnavailableError, and reports it', async () => {
    const { send, requests } = controlledSend();
    const failures: unknown[] = [];
    const batcher = new LingerBatcher(send, { lingerMs: 0, onSendFailed: (e) => failures.push(e) });
    const sent = [batcher.send([message('a', 1)]), batcher.send([message('b', 2)])];
    await tick();
    requests[0]?.reject(new Error('broker gone'));
    for (const s of sent) await expect(s).rejects.toBeInstanceOf(LogUnavailableError);
    expect(batcher.lastSendFailed).toBe(true);
    expect(failures).toHaveLength(1);
    const next = batcher.send([message('a', 3)]);
    await tick();
    requests[1]?.resolve();
    await next;
    expect(batcher.lastSendFailed).toBe(false);
  });

  it('sends what is gathered on close and waits for it', async () => {
    const { send, requests } = controlledSend();
    const batcher = new LingerBatcher(send, { lingerMs: 60_000 });
    const sent = batcher.send([message('a', 1)]);
    const closed = batcher.close();
    await tick();
    expect(requests.map((r) => r.count)).toEqual([1]);
    requests[0]?.resolve();
    await Promise.all([sent, closed]);
  });
});
