// renewingProducer: after a failed send the next send goes through a new producer (a new producer id, so
// kafkajs's idempotent sequences start afresh), connected first; the old one is disconnected. Sends run one
// at a time, so a send made while another is failing goes through the new producer too.
import type { Producer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { renewingProducer } from './kafka-log.ts';

function fakeProducer(id: number, log: string[], failing: { next: boolean }): Producer {
  return {
    connect: async () => void log.push(`connect ${id}`),
    disconnect: async () => void log.push(`disconnect ${id}`),
    send: async () => {
      log.push(`send ${id}`);
      return [];
    },
    sendBatch: async () => {
      log.push(`sendBatch ${id}`);
      if (failing.next) {
        failing.next = false;
        throw new Error('broker away');
      }
      return [];
    },
  } as unknown as Producer;
}

describe('renewingProducer', () => {
  it('sends through a new, connected producer after a failed send, and keeps it while sends succeed', async () => {
    const log: string[] = [];
    const failing = { next: false };
    let made = 0;
    const producer = renewingProducer(fakeProducer(made, log, failing), () =>
      fakeProducer(++made, log, failing),
    );
    await producer.sendBatch({ topicMessages: [] });
    failing.next = true;
    await expect(producer.sendBatch({ topicMessages: [] })).rejects.toThrow('broker away');
    await producer.sendBatch({ topicMessages: [] });
    await producer.send({ topic: 't', messages: [] });
    await producer.disconnect();
    expect(log).toEqual([
      'sendBatch 0',
      'sendBatch 0',
      'connect 1',
      'disconnect 0',
      'sendBatch 1',
      'send 1',
      'disconnect 1',
    ]);
  });

  it('runs sends one at a time: one made while another fails goes through the new producer', async () => {
    const log: string[] = [];
    let fail: (error: Error) => void = () => {};
    let made = 0;
    const make = (id: number): Producer =>
      ({
        connect: async () => void log.push(`connect ${id}`),
        disconnect: async () => void log.push(`disconnect ${id}`),
        sendBatch: () => {
          log.push(`sendBatch ${id} start`);
          if (id === 0 && log.filter((l) => l === 'sendBatch 0 start').length === 1) {
            return new Promise((_, reject) => {
              fail = (error) => {
                log.push(`sendBatch ${id} failed`);
                reject(error);
              };
            });
          }
          log.push(`sendBatch ${id} done`);
          return Promise.resolve([]);
        },
      }) as unknown as Producer;
    const producer = renewingProducer(make(made), () => make(++made));
    const first = producer.sendBatch({ topicMessages: [] });
    const second = producer.sendBatch({ topicMessages: [] });
    await new Promise((resolve) => setImmediate(resolve));
    // The second waits while the first is out.
    expect(log).toEqual(['sendBatch 0 start']);
    fail(new Error('broker away'));
    await expect(first).rejects.toThrow('broker away');
    await second;
    expect(log).toEqual([
      'sendBatch 0 start',
      'sendBatch 0 failed',
      'connect 1',
      'disconnect 0',
      'sendBatch 1 start',
      'sendBatch 1 done',
    ]);
  });
});
