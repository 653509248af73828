// The gateway's event loops in worker threads (GATEWAY_WORKERS): startGatewayThread runs gateway-worker in
// one thread and gives the parent what it needs of it (its URL, its metrics and health for the admin
// server the parent serves, a close that drains it, and a promise that rejects if the thread fails or
// ends on its own); startGatewayWorkers runs several on one port. They share the port with `reusePort`
// (the kernel spreads connections over the listening sockets), which Node.js has from 22.12 and 23.1; on
// an older Node.js there is one event loop, with a warning. With a log the parent holds (the embedded
// log, whose one writer is the parent's), each thread appends through a MessagePort (log/thread); without
// one (Kafka), each thread opens its own log, with its own producer.
import { availableParallelism, totalmem } from 'node:os';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { TallyConfig } from '@tally/config';
import { type RecordLog, type SuspendableLog, serveAppends, serveEnvironmentRelease } from '@tally/log';
import { type Health, type MetricsJson, startOrUnwind } from '@tally/service';
import { RATE_LIMIT_KEYS } from './gateway.ts';
import { createIpConnectionTable } from './ip-connections.ts';
import type { GatewayShared } from './runtime.ts';
import { createSharedRateLimitTable } from './shared-rate-limits.ts';

export interface GatewayThread {
  url: string;
  /** The gateway's metrics, as its registry's JSON. */
  metrics(): Promise<MetricsJson>;
  /** The health of the gateway's record log. */
  health(): Promise<Health>;
  /** Rejects if the gateway thread fails or exits unasked. */
  readonly failed: Promise<never>;
  /** Stops accepting, finishes in-flight requests, closes the gateway's log, and ends the thread. */
  close(): Promise<void>;
}

type WorkerMessage =
  | { type: 'listening'; url: string }
  | { type: 'closed' }
  | { type: 'failed'; message: string; stack?: string; code?: string; port?: number; address?: string }
  | { type: 'answer'; id: number; value: unknown };

function asError(message: {
  message: string;
  stack?: string;
  code?: string;
  port?: number;
  address?: string;
}): Error {
  const error = Object.assign(new Error(message.message), {
    ...(message.code && { code: message.code }),
    ...(message.port !== undefined && { port: message.port }),
    ...(message.address && { address: message.address }),
  });
  if (message.stack) error.stack = message.stack;
  return error;
}

/**
 * V8's young generation of each gateway thread, at most 48 MiB (semi-spaces of 16 MiB). Left to itself V8
 * grows a busy thread's semi-spaces to 64 MiB each, 128 MiB of new space per event loop, resident once
 * used, while the objects of a request live for a few milliseconds: with two loops under load that was
 * ~170 MiB of the process's peak RSS, for no measurable throughput (BENCHMARKS.md, 2026-11-25). Smaller
 * (24 MiB) cost CPU per request in more frequent scavenges. The old generation is left unlimited: a limit
 * there would end the thread (ERR_WORKER_OUT_OF_MEMORY) rather than slow it.
 */
export const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 48 } as const;

/**
 * The thread, from the compiled dist/ (npm start, the image) or from the TypeScript sources (tests, tsx).
 * Compiled, it runs gateway-worker.js as it is. From the sources, gateway-worker.mjs registers tsx in the
 * thread first (Node 20 does not give a worker the parent's `--import` hooks), and the thread gets the export
 * condition that resolves the workspace packages to their sources, as the parent process does.
 */
function workerOf(workerData: GatewayWorkerData, transferList: MessagePort[]): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./gateway-worker.js', import.meta.url), {
      workerData,
      transferList,
      resourceLimits: WORKER_RESOURCE_LIMITS,
    });
  }
  return new Worker(new URL('./gateway-worker.mjs', import.meta.url), {
    workerData,
    transferList,
    resourceLimits: WORKER_RESOURCE_LIMITS,
    execArgv: [...process.execArgv, '--conditions=@tally/source'],
  });
}

/** What a gateway thread is started with (gateway-worker.ts reads it). */
export interface GatewayWorkerData {
  config: TallyConfig;
  /** Its index among the gateway's event loops, the `worker` label of its metrics. */
  worker: string;
  /** Listen with reusePort, beside the other threads on the same port. */
  reusePort: boolean;
  /** How many threads serve the port (they split GATEWAY_MAX_CONNECTIONS). */
  loops: number;
  /** Where to append, when the parent holds the record log; else the thread opens its own. */
  appendPort: MessagePort | null;
  /**
   * When the thread opens the embedded log as its writer beside a handle of the parent's on it: the port
   * through which it asks that handle to close while it reopens its own (thread/release-port.ts).
   */
  releasePort: MessagePort | null;
  /** Memory shared with the other threads (a SharedArrayBuffer is shared, not copied, by workerData). */
  shared: GatewayShared | null;
  /** Whether this thread compares the Kafka topics' settings as its log opens (one thread of a process). */
  checkLogSettings: boolean;
}

export interface GatewayThreadOptions {
  worker?: string;
  reusePort?: boolean;
  /** How many threads serve the port (default 1). */
  loops?: number;
  /** The record log the parent holds, to which the thread appends through a MessagePort. */
  appendLog?: RecordLog | undefined;
  /**
   * The parent's handle on the embedded log the thread opens as its writer (npm start's consumers', with
   * one loop): it closes while the thread reopens its own, so that the file's pages are released.
   */
  sharedLog?: RecordLog | undefined;
  /** Rate-limit counters and the country database, shared with the other threads (sharedByThreads). */
  shared?: GatewayShared | undefined;
  /** Compare the Kafka topics' settings as the thread's log opens (default true). */
  checkLogSettings?: boolean;
}

/**
 * What the gateway threads of a process share: the rate-limit counters without Redis (so that a client
 * gets its limit, not one per event loop), the connections per client IP (so that a client gets its
 * GATEWAY_MAX_CONNECTIONS_PER_IP for the process). The IP database is not among them: each thread reads
 * its files where they lie (mmdb-file.ts), and their pages are the page cache's, shared by every process.
 */
export function sharedByThreads(config: TallyConfig, landingBehind: Int32Array | null = null): GatewayShared {
  return {
    rateLimits: config.backends.state.kind === 'redis' ? null : createSharedRateLimitTable(RATE_LIMIT_KEYS),
    ipConnections: createIpConnectionTable(),
    landingBehind,
  };
}

export async function startGatewayThread(
  config: TallyConfig,
  options: GatewayThreadOptions = {},
): Promise<GatewayThread> {
  let appendPort: MessagePort | null = null;
  if (options.appendLog) {
    const channel = new MessageChannel();
    serveAppends(options.appendLog, channel.port1);
    appendPort = channel.port2;
  }
  let releasePort: MessagePort | null = null;
  if (options.sharedLog && isSuspendable(options.sharedLog)) {
    const channel = new MessageChannel();
    serveEnvironmentRelease(options.sharedLog, channel.port1);
    releasePort = channel.port2;
  }
  const worker = workerOf(
    {
      config,
      worker: options.worker ?? '0',
      reusePort: options.reusePort ?? false,
      loops: options.loops ?? 1,
      appendPort,
      releasePort,
      shared: options.shared ?? null,
      checkLogSettings: options.checkLogSettings ?? true,
    },
    [appendPort, releasePort].filter((port) => port !== null),
  );
  let closing = false;
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {}); // observed by the caller
  let listen: (address: { url: string }) => void = () => {};
  let refuse: (error: Error) => void = () => {};
  const listening = new Promise<{ url: string }>((resolve, reject) => {
    listen = resolve;
    refuse = reject;
  });
  // Settles when the thread has closed the gateway (or failed to), or has ended.
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });

  // Questions to the thread, answered by id.
  let nextId = 0;
  const waiting = new Map<number, (value: unknown) => void>();
  const ask = <T>(type: 'metrics' | 'health'): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, resolve as (value: unknown) => void);
      try {
        worker.postMessage({ type, id });
      } catch (error) {
        waiting.delete(id);
        reject(error);
      }
    });

  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'listening') return listen(message);
    if (message.type === 'answer') {
      waiting.get(message.id)?.(message.value);
      waiting.delete(message.id);
      return;
    }
    if (message.type === 'failed') {
      refuse(asError(message));
      fail(asError(message));
    }
    settle(); // 'closed', or 'failed' (at start, or while closing)
  });
  worker.on('error', (error) => {
    refuse(error);
    fail(error);
  });
  worker.on('exit', (code) => {
    for (const answer of waiting.values()) answer(null); // no answer will come
    waiting.clear();
    const error = new Error(`the gateway thread exited (code ${code})`);
    refuse(error);
    if (!closing) fail(error);
    settle();
  });

  let address: { url: string };
  try {
    address = await listening;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  let closed: Promise<void> | null = null;
  return {
    url: address.url,
    metrics: async () => (await ask<MetricsJson | null>('metrics').catch(() => null)) ?? [],
    health: async () =>
      closing
        ? { ok: false, detail: 'shutting down' }
        : ((await ask<Health | null>('health').catch(() => null)) ?? {
            ok: false,
            detail: 'the gateway thread ended',
          }),
    failed,
    close() {
      closed ??= (async () => {
        closing = true;
        try {
          worker.postMessage('close');
        } catch {
          // the thread has ended already: then it is settled
        }
        await settled;
        // Everything is closed in the thread; end it even if a handle would keep its loop alive.
        await worker.terminate();
      })();
      return closed;
    },
  };
}

/** Whether this Node.js can share a port between event loops (`reusePort`: 22.12+, 23.1+). */
export function reusePortSupported(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/**
 * The memory one more gateway event loop needs under full load, in MiB: its V8 isolate (~35–45 MiB once the
 * gateway's modules are loaded), its young generation (semi-spaces of 8 MiB under the image's flag, else up
 * to WORKER_RESOURCE_LIMITS' 48 MiB) and its share of the old generation, with room for the file pages (the
 * node binary, the log's) that a container's memory limit also counts. The standalone gateway's two loops
 * with its main thread serving one (two isolates) peaked at 138–150 MiB of the process's own memory
 * (RssAnon) in a container of 256 MiB, and ran in one of 200 MiB, where two loop threads beside a main
 * thread (three isolates) were killed by the kernel (BENCHMARKS.md, 2026-11-28, "in a container" and "The
 * main thread as the first loop"). So two loops from 256 MiB, a main thread of its own beside them from
 * 384 MiB (gatewayLoops' `mainLoop`).
 */
export const MEMORY_PER_LOOP_MIB = 128;

/**
 * The memory this process may use, in MiB: its container's limit (the memory cgroup, as Node.js reads it:
 * `process.constrainedMemory()`) where there is one below the machine's, else the machine's.
 */
export function processMemoryMiB(): number {
  const machine = totalmem();
  const constrained = process.constrainedMemory?.() ?? 0;
  return Math.floor((constrained > 0 && constrained < machine ? constrained : machine) / 2 ** 20);
}

/** What the default number of event loops is chosen from (tests give their own). */
export interface LoopHost {
  cores: number;
  /** processMemoryMiB(). */
  memoryMiB: number;
}

/** This process's host: its cores, and the memory it may use. */
export function thisHost(): LoopHost {
  return { cores: availableParallelism(), memoryMiB: processMemoryMiB() };
}

/**
 * How many event loops the gateway runs: GATEWAY_WORKERS, or by default (0) one per core as far as the
 * process's memory holds them (MEMORY_PER_LOOP_MIB each, at least one), so that the gateway fits the
 * container it is given rather than being killed in it under load; or one where this Node.js cannot share
 * the port. With the line that says why, where it runs fewer than asked for: a warning when more were asked
 * for by number, information when it is the default's.
 *
 * `mainLoop`: whether the standalone gateway's main thread serves one of several loops itself, beside
 * holding the embedded log's writer (startGatewayService), because the memory does not hold an isolate
 * more than the loops. Where it does, the main thread keeps to the writer and the admin port: a main thread
 * busy with requests of its own answers the other loops' appends later, and they then serve fewer
 * (BENCHMARKS.md, 2026-11-28, "The main thread as the first loop": two loops on two cores, 15–25% fewer
 * req/s, for ~40–55 MiB less).
 */
export function gatewayLoops(
  config: Pick<TallyConfig, 'GATEWAY_WORKERS'>,
  host: LoopHost = thisHost(),
): {
  loops: number;
  mainLoop: boolean;
  note: { level: 'info' | 'warn'; message: string } | null;
} {
  const byDefault = config.GATEWAY_WORKERS === 0;
  const held = Math.max(1, Math.floor(host.memoryMiB / MEMORY_PER_LOOP_MIB));
  const wanted = byDefault ? Math.min(host.cores, held) : config.GATEWAY_WORKERS;
  if (wanted > 1 && !reusePortSupported()) {
    const asked = byDefault
      ? `one per core (${wanted}) by default`
      : `GATEWAY_WORKERS=${config.GATEWAY_WORKERS}`;
    return {
      loops: 1,
      mainLoop: false,
      note: {
        level: byDefault ? 'info' : 'warn',
        message:
          `running one gateway event loop, not ${asked}: Node.js ${process.versions.node} cannot share ` +
          'the port between event loops (reusePort needs Node.js 22.12 or newer)',
      },
    };
  }
  const mainLoop = wanted > 1 && host.memoryMiB < (wanted + 1) * MEMORY_PER_LOOP_MIB;
  if (byDefault && wanted < host.cores) {
    return {
      loops: wanted,
      mainLoop,
      note: {
        level: 'info',
        message:
          `running ${wanted} gateway event loop${wanted === 1 ? '' : 's'}, not one per core (${host.cores}): ` +
          `the process may use ${host.memoryMiB} MiB (its container's memory limit, or the machine's) and each loop needs ` +
          `about ${MEMORY_PER_LOOP_MIB} MiB under load; GATEWAY_WORKERS sets the number`,
      },
    };
  }
  return { loops: wanted, mainLoop, note: null };
}

/** The gateway's event loops together: one URL, their metrics, their health, one close. */
export interface GatewayWorkers {
  url: string;
  /** How many threads serve (GATEWAY_WORKERS, or one where reusePort is missing). */
  count: number;
  /** Every thread's metrics (registry JSON), for mergedMetrics. */
  metrics(): Promise<MetricsJson[]>;
  /** The first unhealthy thread's health, or ok. */
  health(): Promise<Health>;
  /** Rejects if any thread fails or exits unasked. */
  readonly failed: Promise<never>;
  close(): Promise<void>;
}

/**
 * Starts `count` gateway threads on one port (gatewayLoops says how many this Node.js can run): the first
 * on PORT (0: any free port), the others beside it on the port it got. `beside`: the process serves loops
 * of its own on PORT already (the standalone gateway's main thread is loop 0), so every thread listens on
 * PORT beside them, numbered from `beside.first`, and `beside.loops` loops serve the port in all.
 * `appendLog`: the record log the caller holds and keeps open until close() has resolved; without it each
 * thread opens the log the configuration names (Kafka, or one embedded loop as its writer). A thread that
 * fails to start closes the others.
 */
export async function startGatewayWorkers(
  config: TallyConfig,
  options: {
    count: number;
    appendLog?: RecordLog;
    /** The caller's handle on the embedded log that one thread opens as its writer (GatewayThreadOptions). */
    sharedLog?: RecordLog;
    /** Whether the first thread compares the Kafka topics' settings (false where the caller's own log does). */
    checkLogSettings?: boolean;
    /** Set while the consumers of the process are too far behind (landingBehindFlag; npm start). */
    landingBehind?: Int32Array | undefined;
    /** The process's own loops on PORT, and what they share with these threads (startGatewayService). */
    beside?: { first: number; loops: number; shared: GatewayShared };
  },
): Promise<GatewayWorkers> {
  const { count, beside } = options;
  const loops = beside ? beside.loops : count;
  const reusePort = loops > 1;
  const shared = beside?.shared ?? sharedByThreads(config, options.landingBehind ?? null);
  return startOrUnwind(async (resources) => {
    const threads: GatewayThread[] = [];
    // Closed together: each drains its own connections.
    resources.defer(() => Promise.all(threads.map((thread) => thread.close())));
    let port = config.PORT;
    if (!beside) {
      const first = await startGatewayThread(config, {
        worker: '0',
        reusePort,
        loops,
        appendLog: options.appendLog,
        sharedLog: options.sharedLog,
        shared,
        checkLogSettings: options.checkLogSettings ?? true,
      });
      threads.push(first);
      port = Number(new URL(first.url).port);
    }
    const from = beside ? beside.first : 1;
    const others = await Promise.allSettled(
      Array.from({ length: count - threads.length }, (_, i) =>
        startGatewayThread(
          { ...config, PORT: port },
          {
            worker: String(from + i),
            reusePort,
            loops,
            appendLog: options.appendLog,
            shared,
            checkLogSettings: false,
          },
        ),
      ),
    );
    for (const other of others) if (other.status === 'fulfilled') threads.push(other.value);
    const refused = others.find((other) => other.status === 'rejected');
    if (refused) throw refused.reason;
    const failed = Promise.race(threads.map((thread) => thread.failed));
    failed.catch(() => {}); // observed by the caller
    return {
      url: threads[0]?.url ?? `http://${config.HOST}:${port}`,
      count,
      metrics: () => Promise.all(threads.map((thread) => thread.metrics())),
      async health() {
        for (const thread of threads) {
          const health = await thread.health();
          if (!health.ok) return health;
        }
        return { ok: true };
      },
      failed,
      close: () => resources.close(),
    };
  });
}

/** Whether a record log can close its handle while another thread's writer reopens (the embedded log). */
function isSuspendable(log: RecordLog): log is RecordLog & SuspendableLog {
  return 'suspendEnvironment' in log && 'resumeEnvironment' in log;
}
