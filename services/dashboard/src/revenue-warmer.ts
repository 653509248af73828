// Warms the revenue caches of the warehouse (@tally/reports revenue/warm.ts) when the dashboard starts: for
// the projects and currencies with the most revenue, as many as the caches keep, the revenue page's default
// range (the twelve months to the current one, as the web app opens it). In the background, after the
// dashboard listens: it never delays the start, and a request that comes meanwhile shares its reads.

import { addMonths, utcMonthOf } from '@tally/reports/calendar';
import {
  REVENUE_CACHE_ENTRIES,
  revenueCurrencies,
  TOUCHES_CACHE_ENTRIES,
  warmRevenue,
} from '@tally/reports/revenue';
import type { Warehouse } from '@tally/warehouse';
import type { Logger } from 'pino';

export interface RevenueWarmer {
  /** Settles when warming ended (finished, failed or stopped). */
  done: Promise<void>;
  /** Stops after the project being warmed (the warehouse is about to close). */
  stop(): Promise<void>;
}

export function startRevenueWarmer(warehouse: Warehouse, logger: Logger, now = Date.now()): RevenueWarmer {
  let stopped = false;
  const run = async () => {
    const started = performance.now();
    const to = utcMonthOf(now);
    const from = addMonths(to, -11);
    const projects = new Set<string>();
    let warmed = 0;
    for (const { project, currency } of await revenueCurrencies(warehouse)) {
      if (stopped || warmed >= REVENUE_CACHE_ENTRIES) break;
      if (!projects.has(project) && projects.size >= TOUCHES_CACHE_ENTRIES) continue;
      projects.add(project);
      await warmRevenue(warehouse, { project, currency, from, to });
      warmed += 1;
    }
    if (warmed > 0)
      logger.info(
        { histories: warmed, ms: Math.round(performance.now() - started) },
        'revenue caches warmed',
      );
  };
  const done = run().catch((error: unknown) => {
    if (!stopped) logger.warn({ err: error }, 'warming the revenue caches failed; the first requests read');
  });
  return {
    done,
    stop() {
      stopped = true;
      return done;
    },
  };
}
