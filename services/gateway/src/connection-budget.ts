// How many connections the public port may hold (server.maxConnections): below the process's
// file-descriptor budget, so that a flood of connections is refused by the server, one by one and at
// once, instead of exhausting the descriptors that the record log, the warehouse (chDB opens a file per
// column of a part), the state store and the sockets to Kafka, Redis and the other ports need: without it
// accept() fails with EMFILE, and so does everything else the process opens. GATEWAY_MAX_CONNECTIONS
// overrides it; the budget is the process's, split evenly among its event loops (each has its server).
import { readFileSync } from 'node:fs';

/** The share of the descriptor limit kept for everything but the public port's connections. */
export const RESERVED_SHARE = 0.25;
/** At least this many descriptors are kept for the rest, however low the limit. */
export const RESERVED_MIN = 128;

/**
 * The soft limit on open files from the text of /proc/self/limits (`Max open files  1024  524288  files`),
 * or null when it is absent or `unlimited`.
 */
export function softOpenFilesLimit(limits: string): number | null {
  const match = /^Max open files\s+(\S+)\s+/m.exec(limits);
  if (!match || match[1] === 'unlimited') return null;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** This process's soft RLIMIT_NOFILE, read from /proc/self/limits (Linux); null elsewhere. */
export function processOpenFilesLimit(): number | null {
  try {
    return softOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return null;
  }
}

/**
 * server.maxConnections for one of `loops` event loops: GATEWAY_MAX_CONNECTIONS when set (> 0), else
 * three quarters of the descriptor limit (at least RESERVED_MIN kept back), split among the loops; at least
 * one connection per loop. Null: no cap (the limit is unknown or unlimited, and nothing was configured).
 */
export function maxConnectionsPerLoop(
  configured: number,
  loops: number,
  openFilesLimit: number | null = processOpenFilesLimit(),
): number | null {
  const n = Math.max(1, loops);
  if (configured > 0) return Math.max(1, Math.floor(configured / n));
  if (openFilesLimit === null) return null;
  const reserved = Math.max(RESERVED_MIN, Math.ceil(openFilesLimit * RESERVED_SHARE));
  return Math.max(1, Math.floor((openFilesLimit - reserved) / n));
}
