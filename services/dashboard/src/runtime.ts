// startDashboard: opens what the dashboard needs (the state store: LMDB in TALLY_DATA_DIR or Redis; the
// read keys of the token store; the warehouse, unless the caller hands it one), builds it and listens on
// DASHBOARD_HOST:DASHBOARD_PORT. Its own process (main.ts) reaches the warehouse as the CLI does
// (reachWarehouse): a ClickHouse server (CLICKHOUSE_URL); beside a running `npm start`, the warehouse
// endpoint that process publishes; else the chDB directory. `npm start` runs it in its main process with a
// connection of its own on the embedded warehouse's directory. Once it listens, it warms the revenue
// caches in the background (revenue-warmer.ts). Its address is published in TALLY_DATA_DIR for the CLI's
// sign-in links (`tally users add` beside it prints the port it really listens on).
import type { TallyConfig } from '@tally/config';
import { openMailer } from '@tally/mail';
import { startOrUnwind } from '@tally/service';
import { publishAddress, unpublishAddress } from '@tally/state-files';
import {
  AlertStore,
  Invitations,
  openStateStore,
  ProjectStore,
  RefusalCounts,
  ReportSubscriptions,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/state-store';
import { connectRedis, openTokenStore, TokenVerifier } from '@tally/tokens';
import { migrate, type Warehouse } from '@tally/warehouse';
import { reachWarehouse } from '@tally/warehouse-http';
import type { FastifyInstance } from 'fastify';
import { type Logger, pino } from 'pino';
import { startAlertEvaluator } from './alerts/evaluator.ts';
import { buildDashboard } from './dashboard.ts';
import type { ConsumerStates, HealthLog, IngestionHold } from './deps.ts';
import { ownHealthLog } from './health-log.ts';
import { startRevenueWarmer } from './revenue-warmer.ts';
import { startReportScheduler } from './scheduled-reports/scheduler.ts';

/** Attempts (sign-in, password links, share passwords) per client address per 15 minutes. */
export const ATTEMPTS_PER_WINDOW = 10;
export const ATTEMPT_WINDOW_MS = 15 * 60_000;

export interface RunningDashboard {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export interface StartDashboardOptions {
  /** A warehouse the caller opened and closes (npm start's own connection). */
  warehouse?: Warehouse;
  logger?: Logger;
  /** The record log of the process (npm start), for the health view; without it the dashboard opens its own. */
  log?: HealthLog;
  /** The consumers of the process (npm start), whose stalls the health view shows as they tell them. */
  consumers?: ConsumerStates;
  /** Why the process's gateway holds ingestion back (npm start's LagGate), for the health view. */
  ingestionHold?: () => IngestionHold | null;
}

export async function startDashboard(
  config: TallyConfig,
  options: StartDashboardOptions = {},
): Promise<RunningDashboard> {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { service: 'dashboard' } });
  // Closed in the reverse order of these steps: the revenue warmer, the server (it waits for the requests
  // in flight), the warehouse (unless the caller's), the health view's log, the read keys, the stores and
  // the Redis connection.
  return startOrUnwind(async (resources) => {
    const redis = resources.add(
      connectRedis(config, { onError: (error) => logger.warn({ err: error }, 'redis error') }),
      (connection) => connection?.disconnect(),
    );
    const tokenStore = resources.add(openTokenStore(config, redis), (store) => store.close());
    const store = resources.add(openStateStore(config, redis), (opened) => opened.close());
    const readKeys = resources.add(
      new TokenVerifier(tokenStore, {
        refreshMs: config.TOKEN_REFRESH_MS,
        kinds: ['read'],
        onError: (error) =>
          logger.warn({ err: error }, 'token refresh failed; keeping the keys loaded before'),
      }),
      (verifier) => verifier.stop(),
    );
    const log: HealthLog = options.log ?? resources.add(ownHealthLog(config), (ownLog) => ownLog.close());
    await readKeys.start();
    // A warehouse of its own: as the CLI reaches it (the server, else the running Tally's endpoint, else
    // the directory). Alone (compose), it may start before the consumers: the tables it reads must exist.
    const warehouse =
      options.warehouse ?? resources.add(await reachWarehouse(config), (opened) => opened.close());
    if (!options.warehouse) await migrate(warehouse);
    // Mail (invitations, password links, scheduled reports), when an SMTP server is configured.
    const mailer = resources.add(openMailer(config), (opened) => opened.close());
    const users = new Users(store);
    let listening: string | undefined;
    const app = resources.add(
      await buildDashboard(
        {
          config,
          warehouse,
          users,
          invitations: new Invitations(store, users),
          mailer,
          listeningUrl: () => listening,
          sessions: new Sessions(store),
          shares: new ShareLinks(store),
          projects: new ProjectStore(store),
          alerts: new AlertStore(store),
          reportSubscriptions: new ReportSubscriptions(store),
          readKeys,
          tokens: tokenStore,
          attemptLimit: { max: ATTEMPTS_PER_WINDOW, timeWindow: ATTEMPT_WINDOW_MS },
          signInFailures: new SignInFailures(store),
          log,
          ...(options.consumers && { consumers: options.consumers }),
          ...(options.ingestionHold && { ingestionHold: options.ingestionHold }),
          refusals: new RefusalCounts(store),
        },
        { logger, redis },
      ),
      (server) => server.close(),
    );
    const url = await app.listen({ port: config.DASHBOARD_PORT, host: config.DASHBOARD_HOST });
    listening = linkUrl(url);
    resources.add(publishAddress(config.dataDir, 'dashboard', linkUrl(url)), () =>
      unpublishAddress(config.dataDir, 'dashboard'),
    );
    resources.add(startRevenueWarmer(warehouse, logger), (warmer) => warmer.stop());
    // Scheduled email reports, when an SMTP server is configured (docs/design/scheduled-reports.md).
    if (mailer.configured)
      resources.add(
        startReportScheduler({
          warehouse,
          users,
          projects: new ProjectStore(store),
          subscriptions: new ReportSubscriptions(store),
          send: async (email) => void (await mailer.send(email)),
          dashboardUrl: config.DASHBOARD_PUBLIC_URL ?? linkUrl(url),
          logger,
        }),
        (scheduler) => scheduler.stop(),
      );
    // Alert rules, evaluated every ALERTS_INTERVAL_MS whether or not mail is configured: a rule's webhook
    // needs no SMTP server, and an email owed without one stays owed, its state saying why
    // (docs/alerts.md).
    resources.add(
      startAlertEvaluator(
        {
          warehouse,
          log,
          users: new Users(store),
          alerts: new AlertStore(store),
          sendEmail: async (email) => {
            const result = await mailer.send(email);
            if (!result.sent) throw new Error('no SMTP server is configured (SMTP_HOST)');
          },
          webhookTimeoutMs: config.ALERTS_WEBHOOK_TIMEOUT_MS,
          dashboardUrl: config.DASHBOARD_PUBLIC_URL ?? linkUrl(url),
          logger,
        },
        config.ALERTS_INTERVAL_MS,
      ),
      (evaluator) => evaluator.stop(),
    );
    return {
      app,
      url: url.replace('0.0.0.0', '127.0.0.1'),
      close: () => resources.close(),
    };
  });
}

/** The address people open on this machine: `localhost` where the server listens on every interface. */
function linkUrl(listening: string): string {
  const url = new URL(listening);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = 'localhost';
  return url.origin;
}
