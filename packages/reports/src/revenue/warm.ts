// Warming the revenue caches: the first request of a process for a project's revenue reads and folds its
// whole history (history-cache.ts) and reads every customer's touches (touches-cache.ts): seconds at
// 50,000 customers, where every later request takes a fraction of it. The dashboard warms them when it
// starts (services/dashboard, revenue-warmer.ts), so that nobody's first look pays it; a request that comes
// while warming waits for the same reads (the caches keep the read in flight), never for a second one.

import type { Warehouse } from '@tally/warehouse';
import { monthStart } from '../calendar.ts';
import { revenueAttribution } from './attribution.ts';
import { foldHistory } from './customers.ts';
import { readMrrInputsCached } from './history-cache.ts';
import { monthlyRevenue } from './monthly.ts';
import { foldPeriod } from './period.ts';
import { readCustomerTouchesCached } from './touches-cache.ts';

/**
 * Reads a project's history of `currency` and its customers' touches into the caches, and computes the
 * folds the revenue page asks for over months from…to (the MRR report, the attribution's default
 * grouping, the reconciliation of the last month, the customer list), which the panels then share.
 */
export async function warmRevenue(
  warehouse: Warehouse,
  options: { project: string; currency: string; from: string; to: string },
): Promise<void> {
  const { project, currency, from, to } = options;
  // Asked together, the three reads share one probe of the stored revenue (probe.ts). The customer
  // list and the funnel read the whole history (no end): the same array unless it has records after `to`.
  const [records, touches, all] = await Promise.all([
    readMrrInputsCached(warehouse, { project, currency, until: monthStart(to, 1) }),
    readCustomerTouchesCached(warehouse, project),
    readMrrInputsCached(warehouse, { project, currency }),
  ]);
  monthlyRevenue(records, from, to, [currency]);
  revenueAttribution(records, { from, to, currency, by: 'channel', touch: 'first', touches });
  foldPeriod(records, { from: to, to, currency });
  foldHistory(all, currency);
}

/**
 * The projects and currencies with revenue, most records first: what the dashboard warms (as many as the
 * caches keep).
 */
export async function revenueCurrencies(
  warehouse: Warehouse,
): Promise<Array<{ project: string; currency: string }>> {
  const rows = await warehouse.query<{ project_id: string; currency: string }>(
    `SELECT project_id, currency FROM revenue GROUP BY project_id, currency ORDER BY count() DESC, project_id, currency`,
  );
  return rows.map((r) => ({ project: r.project_id, currency: r.currency }));
}
