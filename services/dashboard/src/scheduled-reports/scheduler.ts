// The scheduled reports' scheduler, in the dashboard process: each tick (every minute) goes over the
// members and their projects, and for each report a member chose whose period is due in the project's time
// zone (periods.ts) delivers it once (ReportSubscriptions.deliverOnce: a lease and a "sent" marker in the
// state store, so several dashboard processes and restarts send each period once). Sending goes through a
// small port (`send`), the SMTP mailer in the service. `tick` takes the clock, so tests choose "Monday
// 08:00"; `stop` waits for the tick under way.
import type { ProjectStore, ReportKind, ReportSubscriptions, Users } from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import type { Logger } from 'pino';
import { type ReportEmail, renderReportEmail, reportContent } from './content.ts';
import { dueReportPeriod } from './periods.ts';

export const REPORT_TICK_MS = 60_000;

export interface ReportSchedulerDeps {
  warehouse: Warehouse;
  users: Users;
  projects: ProjectStore;
  subscriptions: ReportSubscriptions;
  /** Sends one email (the SMTP mailer); throws when it could not. */
  send(email: ReportEmail): Promise<void>;
  dashboardUrl: string;
  logger: Logger;
}

export interface ReportScheduler {
  /** Delivers every report due at `now` (ms) not yet sent; how many this call sent. */
  tick(now?: number): Promise<number>;
  stop(): Promise<void>;
}

export function reportScheduler(deps: ReportSchedulerDeps): ReportScheduler {
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;

  const deliver = async (now: number): Promise<number> => {
    let sent = 0;
    for (const user of await deps.users.list()) {
      for (const project of user.projects) {
        const choice = await deps.subscriptions.get(project, user.email);
        const kinds = (['weekly', 'monthly'] as const).filter((kind: ReportKind) => choice[kind]);
        if (kinds.length === 0) continue;
        const timeZone = (await deps.projects.settings(project)).time_zone;
        for (const kind of kinds) {
          if (stopped) return sent;
          const period = dueReportPeriod(kind, timeZone, now);
          try {
            const done = await deps.subscriptions.deliverOnce(
              project,
              user.email,
              kind,
              period.period,
              async () => {
                const content = await reportContent(deps.warehouse, project, timeZone, period);
                await deps.send(renderReportEmail(content, user.email, deps.dashboardUrl));
              },
            );
            if (done) {
              sent += 1;
              deps.logger.info({ project, kind, period: period.period }, 'report sent');
            }
          } catch (error) {
            deps.logger.warn({ err: error, project, kind, period: period.period }, 'sending a report failed');
          }
        }
      }
    }
    return sent;
  };

  const tick = (now = Date.now()): Promise<number> => {
    running = running.catch(() => 0).then(() => (stopped ? 0 : deliver(now)));
    return running;
  };

  return {
    tick,
    stop() {
      stopped = true;
      return running.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

/** The first tick after the process starts: a report that fell due while it was down goes out now. */
export const REPORT_FIRST_TICK_MS = 2_000;

/** The scheduler ticking soon after the start, then every minute until stopped (the dashboard process). */
export function startReportScheduler(deps: ReportSchedulerDeps): ReportScheduler {
  const scheduler = reportScheduler(deps);
  const tick = () => {
    scheduler
      .tick()
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'the report scheduler failed'));
  };
  const first = setTimeout(tick, REPORT_FIRST_TICK_MS);
  const timer = setInterval(tick, REPORT_TICK_MS);
  first.unref();
  timer.unref();
  return {
    tick: scheduler.tick,
    stop() {
      clearTimeout(first);
      clearInterval(timer);
      return scheduler.stop();
    },
  };
}
