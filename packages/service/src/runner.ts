// runService: what every Tally process's main.ts does, written once. It reads the configuration, starts the
// service, tells that it is ready (a human line on stdout, and a JSON file at TALLY_READY_FILE for tests,
// benchmarks and supervisors), shuts down cleanly on SIGTERM/SIGINT (a second signal ends it at once), and
// stops with exit code 1 when the service fails on its own. A failure to start is one line on stderr that
// says what to do, not a stack trace. A failed LMDB commit (a full disk) does not end it
// (lmdb-commit-failures.ts).
// Before anything is opened, the process's files are made private: new ones 0600 in 0700 directories (its
// umask), and what an older Tally left group- or world-readable in TALLY_DATA_DIR is made so too.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadConfig, type TallyConfig } from '@tally/config';
import { keepNewFilesPrivate, makePrivateTree } from '@tally/state-files';
import { type Logger, pino } from 'pino';
import { tolerateLmdbCommitFailures } from './lmdb-commit-failures.ts';

export interface RunningService {
  /** What the process serves, for the readiness file: `{ url, adminUrl, … }`. */
  endpoints: Record<string, string | null>;
  /** Rejects when the service fails on its own (a consumer cannot go on, a thread ended). */
  failed?: Promise<never>;
  /** Stops accepting work, finishes what is in flight, releases everything. */
  close(): Promise<void>;
}

export interface ServiceDefinition {
  /** The process's name in logs and in the readiness file: gateway, analytics-consumer, tally, … */
  name: string;
  start(config: TallyConfig, logger: Logger): Promise<RunningService>;
  /** The lines a person reads once the service runs (addresses, what to do next). */
  banner?(service: RunningService, config: TallyConfig): string;
}

/** What TALLY_READY_FILE holds once the process is ready. */
export interface Readiness {
  service: string;
  pid: number;
  endpoints: Record<string, string | null>;
}

/** The readiness a file holds, or null while there is none (not ready yet, or stopped). */
export function readReadiness(path: string): Readiness | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Readiness;
  } catch {
    return null;
  }
}

/**
 * Waits until the process `pid` has written its readiness to `path`; rejects after `timeoutMs` or as soon
 * as `exited` settles (the process ended without becoming ready).
 */
export async function waitForReadiness(
  path: string,
  pid: number,
  timeoutMs: number,
  exited: Promise<unknown>,
): Promise<Readiness> {
  let ended = false;
  void exited.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const readiness = readReadiness(path);
    if (readiness?.pid === pid) return readiness;
    if (ended) throw new Error(`the process ${pid} exited before it was ready`);
    if (Date.now() > deadline) throw new Error(`the process ${pid} was not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Writes the readiness file whole (a reader never sees half of it). */
export function writeReadiness(path: string, readiness: Readiness): void {
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(readiness)}\n`);
  renameSync(partial, path);
}

export async function runService(definition: ServiceDefinition): Promise<void> {
  let config: TallyConfig;
  try {
    config = loadConfig();
  } catch (error) {
    return fail(`invalid configuration: ${(error as Error).message}`);
  }
  const logger = pino({ level: config.LOG_LEVEL, base: { service: definition.name } });
  // A full disk fails LMDB's commits: the writers are told, and the process goes on (see the module).
  tolerateLmdbCommitFailures((error) => logger.debug({ err: error }, 'an LMDB commit failed'));
  let service: RunningService;
  try {
    keepNewFilesPrivate();
    makePrivateTree(config.dataDir);
    service = await definition.start(config, logger);
  } catch (error) {
    logger.debug({ err: error }, 'start failed');
    return fail(startFailure(error));
  }
  const readyFile = config.TALLY_READY_FILE;
  if (definition.banner) process.stdout.write(definition.banner(service, config));
  if (readyFile)
    writeReadiness(readyFile, { service: definition.name, pid: process.pid, endpoints: service.endpoints });

  let stopping = false;
  const shutDown = (code: number) => {
    if (stopping) return;
    stopping = true;
    service.close().then(
      () => {
        if (readyFile) rmSync(readyFile, { force: true });
        process.exit(code);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        logger.warn({ signal }, 'second signal while shutting down: exiting now');
        process.exit(1);
      }
      logger.info({ signal }, 'shutting down');
      shutDown(0);
    });
  }
  service.failed?.catch((error: unknown) => {
    logger.fatal({ err: error }, `${definition.name} failed; shutting down`);
    shutDown(1);
  });
}

/** One line on stderr, exit code 1. */
function fail(message: string): void {
  process.stderr.write(`tally: ${message}\n`);
  process.exitCode = 1;
}

/** What a person needs to know of a failed start, in one line. */
export function startFailure(error: unknown): string {
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e?.code === 'EADDRINUSE') {
    return `port ${e.port ?? ''} on ${e.address ?? 'this host'} is in use by another process: stop it, or choose another port (PORT, ADMIN_PORT, DASHBOARD_PORT, …)`;
  }
  if (e?.code === 'EACCES' && e.port !== undefined) {
    return `no permission to listen on port ${e.port}: use a port above 1023`;
  }
  return (e as Error)?.message ?? String(error);
}
