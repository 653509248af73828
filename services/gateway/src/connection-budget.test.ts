// The public port's connection cap from the process's file-descriptor limit: the soft limit read from
// /proc/self/limits, a quarter (at least RESERVED_MIN) kept for everything else, split among the loops;
// GATEWAY_MAX_CONNECTIONS overrides it.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { maxConnectionsPerLoop, processOpenFilesLimit, softOpenFilesLimit } from './connection-budget.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

it('reads the soft limit on open files', () => {
  expect(softOpenFilesLimit(LIMITS)).toBe(1024);
  expect(softOpenFilesLimit(LIMITS.replace('1024   ', 'unlimited'))).toBeNull();
  expect(softOpenFilesLimit('Max cpu time unlimited unlimited seconds\n')).toBeNull();
  // This process's, as Linux reports it.
  const own = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  expect(processOpenFilesLimit()).toBe(Number(own));
});

it('keeps a quarter of the descriptors for the rest of the process, split among the loops', () => {
  expect(maxConnectionsPerLoop(0, 1, 1024)).toBe(768);
  expect(maxConnectionsPerLoop(0, 2, 1024)).toBe(384);
  expect(maxConnectionsPerLoop(0, 1, 20_000)).toBe(15_000);
  // However low the limit, RESERVED_MIN stay, and each loop may hold a connection.
  expect(maxConnectionsPerLoop(0, 1, 256)).toBe(128);
  expect(maxConnectionsPerLoop(0, 4, 100)).toBe(1);
  // Unknown or unlimited: no cap, unless one is configured.
  expect(maxConnectionsPerLoop(0, 2, null)).toBeNull();
  expect(maxConnectionsPerLoop(1000, 2, null)).toBe(500);
  expect(maxConnectionsPerLoop(1000, 1, 20_000)).toBe(1000);
});
