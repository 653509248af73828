// renewingProducer: after a failed send the next send goes through a new producer (a new producer id, so
// kafkajs's idempotent sequences start afresh), connected first; the old one is disconnected.
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
});
