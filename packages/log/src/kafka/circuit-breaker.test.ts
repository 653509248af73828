// The circuit breaker's states with a fake clock and an injected probe: opened by a failed or unanswered
// produce request (once), refusing at once while open, closed by a successful probe (once), and deaf to
// news from before it closed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LogUnavailableError } from '../record-log.ts';
import { CircuitBreaker, type CircuitChange } from './circuit-breaker.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function breaker(probe: () => Promise<void>) {
  const changes: CircuitChange[] = [];
  const b = new CircuitBreaker({
    openAfterMs: 1_000,
    probeIntervalMs: 100,
    probe,
    onChange: (c) => changes.push(c),
  });
  return { b, changes };
}

/** A send that settles when told. */
function pendingSend() {
  let resolve: () => void = () => {};
  let reject: (error: Error) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { send: () => promise, resolve, reject };
}

describe('CircuitBreaker', () => {
  it('opens once when a produce request fails, refuses at once while open, closes once on a probe', async () => {
    let reachable = false;
    const { b, changes } = breaker(async () => {
      if (!reachable) throw new Error('connection refused');
    });
    expect(() => b.check()).not.toThrow();
    const failed = new Error('Connection error: connect ECONNREFUSED');
    await expect(b.watch(() => Promise.reject(failed))).rejects.toBe(failed);
    await expect(b.watch(() => Promise.reject(new Error('again')))).rejects.toThrow('again');
    expect(b.isOpen).toBe(true);
    expect(b.accounts(failed)).toBe(true);
    expect(changes.map((c) => c.state)).toEqual(['open']);
    expect(changes[0]?.message).toContain('ECONNREFUSED');
    let refusal: unknown;
    try {
      b.check();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(LogUnavailableError);
    expect((refusal as LogUnavailableError).reported).toBe(true);
    expect(b.health()?.ok).toBe(false);

    await vi.advanceTimersByTimeAsync(550); // probes fail: still open
    expect(b.isOpen).toBe(true);
    reachable = true;
    await vi.advanceTimersByTimeAsync(150);
    expect(b.isOpen).toBe(false);
    expect(b.health()).toBeNull();
    expect(changes.map((c) => c.state)).toEqual(['open', 'closed']);
    expect(() => b.check()).not.toThrow();
    b.stop();
  });

  it('opens when a produce request has no answer within openAfterMs, and not for a request answered in time', async () => {
    const { b, changes } = breaker(async () => {});
    const quick = pendingSend();
    const sent = b.watch(quick.send);
    await vi.advanceTimersByTimeAsync(900);
    quick.resolve();
    await sent;
    await vi.advanceTimersByTimeAsync(500);
    expect(b.isOpen).toBe(false);

    const slow = pendingSend();
    void b.watch(slow.send);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(b.isOpen).toBe(true);
    expect(changes[0]?.message).toContain('no answer to a produce request within 1000 ms');
    b.stop();
  });

  it('ignores the failure of a request sent before it last closed', async () => {
    const { b, changes } = breaker(async () => {});
    const old = pendingSend();
    const oldSent = b.watch(old.send);
    await expect(b.watch(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await vi.advanceTimersByTimeAsync(100); // the probe succeeds: closed
    expect(b.isOpen).toBe(false);
    const late = new Error('retries exhausted');
    old.reject(late);
    await expect(oldSent).rejects.toBe(late);
    expect(b.isOpen).toBe(false);
    expect(b.accounts(late)).toBe(true); // told already: its records were answered 503 long ago
    await vi.advanceTimersByTimeAsync(2_000); // nor does its timer open it
    expect(b.isOpen).toBe(false);
    expect(changes.map((c) => c.state)).toEqual(['open', 'closed']);
    b.stop();
  });

  it('gives up a probe that hangs and probes again', async () => {
    let calls = 0;
    const { b } = breaker(() => {
      calls += 1;
      return calls === 1 ? new Promise<void>(() => {}) : Promise.resolve();
    });
    await expect(b.watch(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(b.isOpen).toBe(true); // the first probe hangs, and no second starts beside it
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1_200); // given up after 2 s, the next one succeeds
    expect(b.isOpen).toBe(false);
    b.stop();
  });

  it('does not count a failure while the log is closing as told', async () => {
    const { b, changes } = breaker(async () => {});
    const inFlight = pendingSend();
    const sent = b.watch(inFlight.send);
    b.stop();
    const error = new Error('disconnected');
    inFlight.reject(error);
    await expect(sent).rejects.toBe(error);
    expect(b.accounts(error)).toBe(false);
    expect(changes).toEqual([]);
  });
});
