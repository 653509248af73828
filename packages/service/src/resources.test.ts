import { describe, expect, it } from 'vitest';
import { Resources, startOrUnwind } from './resources.ts';

/** A start of `steps` steps, each opening a resource named by its number; step `failAt` throws instead. */
function startSteps(steps: number, failAt: number | null, closed: number[]) {
  return startOrUnwind(async (resources) => {
    for (let step = 1; step <= steps; step++) {
      await Promise.resolve(); // each step waits, as opening a file or a port does
      if (step === failAt) throw new Error(`step ${step} failed`);
      resources.add(step, (n) => {
        closed.push(n);
      });
    }
    return { close: () => resources.close() };
  });
}

describe('startOrUnwind', () => {
  it.each([
    1, 2, 3, 5,
  ])('closes steps 1…k−1 once, in reverse, when step k = %i fails, and throws its error', async (k) => {
    const closed: number[] = [];
    await expect(startSteps(5, k, closed)).rejects.toThrow(`step ${k} failed`);
    expect(closed).toEqual(Array.from({ length: k - 1 }, (_, i) => k - 1 - i));
  });

  it('closes nothing while the start succeeds, then everything once, in reverse, however often close is called', async () => {
    const closed: number[] = [];
    const running = await startSteps(4, null, closed);
    expect(closed).toEqual([]);
    await Promise.all([running.close(), running.close()]);
    await running.close();
    expect(closed).toEqual([4, 3, 2, 1]);
  });

  it("throws the step's error, not a failure while unwinding, and still runs every other close", async () => {
    const closed: string[] = [];
    const start = startOrUnwind(async (resources) => {
      resources.defer(() => {
        closed.push('first');
      });
      resources.defer(() => {
        throw new Error('the second cannot close');
      });
      resources.defer(() => {
        closed.push('third');
      });
      throw new Error('the fourth step failed');
    });
    await expect(start).rejects.toThrow('the fourth step failed');
    expect(closed).toEqual(['third', 'first']);
  });
});

describe('Resources', () => {
  it('waits for each close before the one registered before it', async () => {
    const resources = new Resources();
    const events: string[] = [];
    resources.defer(async () => {
      events.push('log closed');
    });
    let drain = () => {};
    const drained = new Promise<void>((resolve) => {
      drain = resolve;
    });
    resources.defer(async () => {
      await drained;
      events.push('server drained');
    });
    const closing = resources.close();
    // Every callback ready to run has run (a turn of the event loop): the log's close still waits.
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
    drain();
    await closing;
    expect(events).toEqual(['server drained', 'log closed']);
  });

  it('runs every close when one fails, then rejects with the first failure', async () => {
    const resources = new Resources();
    const closed: string[] = [];
    resources.defer(() => {
      closed.push('a');
    });
    resources.defer(() => {
      throw new Error('b failed');
    });
    resources.defer(() => {
      throw new Error('c failed');
    });
    await expect(resources.close()).rejects.toThrow('c failed');
    expect(closed).toEqual(['a']);
  });

  it('refuses what is added once it is closing', async () => {
    const resources = new Resources();
    await resources.close();
    expect(() => resources.add(1, () => {})).toThrow(/closed/);
  });
});
