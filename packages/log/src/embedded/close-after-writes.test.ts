// The embedded log closes its environment (a reopen that releases its pages, close) only once lmdb-js's
// write threads are done with it: closing the process's last handle while one still ran crashed npm start
// (lmdb-write-threads.ts in @tally/state-files). The threads' idle() is held here, and each handle's
// root.close() recorded, to see that no close comes before the wait is over, and that what was appended
// meanwhile is kept.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { testRecord } from '../conformance.ts';
import { openEmbeddedLog } from './embedded-log.ts';

const seen = vi.hoisted(() => ({
  events: [] as string[],
  /** While set, idle() waits until release() is called. */
  held: false,
  release: null as (() => void) | null,
}));

vi.mock('@tally/state-files', async (importOriginal) => {
  const real = await importOriginal<typeof import('@tally/state-files')>();
  return {
    ...real,
    trackWriteThreads(root: { close(): Promise<void> }) {
      const threads = real.trackWriteThreads(root);
      const close = root.close.bind(root);
      root.close = () => {
        seen.events.push('close');
        return close();
      };
      return {
        ...threads,
        async idle() {
          seen.events.push('idle');
          if (seen.held) {
            await new Promise<void>((resolve) => {
              seen.release = resolve;
            });
          }
          await threads.idle();
          seen.events.push('idle done');
        },
      };
    },
  };
});

const dirs: string[] = [];
afterEach(() => {
  seen.events = [];
  seen.held = false;
  seen.release = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-close-after-writes-'));
  dirs.push(dir);
  return dir;
}

const page = (n: number) =>
  testRecord('pageview', { id: `p${n}`, data: { url: `https://example.com/${'x'.repeat(900)}` } });

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`${what} did not happen`);
}

it('reopens only once its write threads are idle; appends meanwhile wait and are kept', async () => {
  const path = tempDir();
  const log = openEmbeddedLog({ path, writer: true, releasePagesEveryBytes: 4 * 1024 });
  try {
    seen.held = true;
    // ~5 KiB appended: a reopen starts once they have committed.
    const first = Promise.all(Array.from({ length: 5 }, (_, i) => log.append([page(i)])));
    await until('the reopen waiting for the write threads', () => seen.release !== null);
    const waiting = log.append([page(5)]);
    let appended = false;
    void waiting.then(() => {
      appended = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.events).toEqual(['idle']); // not closed
    expect(appended).toBe(false); // the append waits for the reopen
    expect(log.environmentReopens()).toBe(0);

    seen.held = false;
    seen.release?.();
    await Promise.all([first, waiting]);
    expect(seen.events.slice(0, 3)).toEqual(['idle', 'idle done', 'close']);
    expect(log.environmentReopens()).toBeGreaterThanOrEqual(1);
  } finally {
    seen.held = false;
    seen.release?.();
    await log.close();
  }
  const reader = openEmbeddedLog({ path });
  try {
    const batch = await reader.consumer({ group: 'check', topics: ['pageview'] }).poll({ max: 100 });
    expect(batch.map((m) => m.record?.id)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
  } finally {
    await reader.close();
  }
});

it('closes once the appends under way have committed and its write threads are idle', async () => {
  const path = tempDir();
  const log = openEmbeddedLog({ path, writer: true });
  const appends = Array.from({ length: 20 }, (_, i) => log.append([page(i)]));
  await log.close(); // at once, with every append still committing
  await Promise.all(appends); // none refused
  // Every close came after a wait for the threads to be idle.
  expect(seen.events).toEqual(['idle', 'idle done', 'close']);
  const reader = openEmbeddedLog({ path });
  try {
    const batch = await reader.consumer({ group: 'check', topics: ['pageview'] }).poll({ max: 100 });
    expect(batch).toHaveLength(20);
  } finally {
    await reader.close();
  }
});
