// The standalone gateway process (main.ts) with its GATEWAY_WORKERS event loops. One loop (one core, or a
// Node.js without reusePort): the gateway runs in the main thread, as startGateway builds it. Several:
// each loop is a worker thread serving the port (gateway-threads.ts); the main thread holds the embedded
// record log, the one writer, to which the threads append through MessagePorts (its group commit takes
// all of their records), and serves the admin port with every thread's metrics merged. With Kafka each
// thread has its own producer, and the main thread holds no log.
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { allHealthy, buildAdmin, mergedMetrics } from '@tally/service';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type GatewayWorkers, gatewayLoops, startGatewayWorkers } from './gateway-threads.ts';
import { startGateway } from './runtime.ts';

export interface GatewayService {
  url: string;
  adminUrl: string | null;
  /** How many event loops serve the public port. */
  workers: number;
  /** Rejects if a gateway thread fails (never, with one loop in the main thread). */
  readonly failed: Promise<never>;
  close(): Promise<void>;
}

export async function startGatewayService(config: TallyConfig, logger: Logger): Promise<GatewayService> {
  const { loops: wanted, note } = gatewayLoops(config);
  if (note) logger[note.level](note.message);
  if (wanted <= 1) {
    const gateway = await startGateway(config, { logger });
    return {
      url: gateway.url,
      adminUrl: gateway.adminUrl,
      workers: 1,
      failed: new Promise<never>(() => {}),
      close: () => gateway.close(),
    };
  }

  const shared = { ...config, TALLY_DATA_DIR: resolve(config.TALLY_DATA_DIR) };
  const kafka = Boolean(config.KAFKA_BROKERS && config.SCHEMA_REGISTRY_URL);
  let log: RecordLog | null = null;
  let workers: GatewayWorkers | null = null;
  let admin: FastifyInstance | null = null;
  const closeAll = async () => {
    await workers?.close(); // drained: every append in flight has been answered by the log
    await admin?.close();
    await log?.close(); // releases the embedded log's writer lock
  };
  try {
    log = kafka
      ? null
      : await openRecordLog(shared, {
          onWarning: (message: string, error: unknown) => logger.warn({ err: error }, message),
          writer: true,
        });
    workers = await startGatewayWorkers(shared, {
      count: wanted,
      ...(log && { appendLog: log }),
      onWarning: (message) => logger.warn(message),
    });
    const running = workers;
    const appendLog = log;
    admin = buildAdmin({
      health: () => allHealthy([() => running.health(), ...(appendLog ? [() => appendLog.health()] : [])]),
      metrics: async () => mergedMetrics([], await running.metrics()),
      logger,
    });
    const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    let closing: Promise<void> | null = null;
    return {
      url: running.url,
      adminUrl,
      workers: running.count,
      failed: running.failed,
      close() {
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
}
