// GET …/revenue/*: revenue figures of a project, which a share link shows only when its creator included
// revenue (access `revenue`): the monthly MRR report (as `tally report mrr --json`), MRR by first or last
// touch, the reconciliation of a month, the drill-down of any figure, the acquisition funnel, the
// customers and a customer's page, the breakdown by plan, interval, … or metadata key, and the metadata
// search. `filters` (@tally/reports revenue/filters.ts) narrows the MRR report, attribution, breakdown,
// drill-down and customers to the customers it keeps; the funnel counts visitors, which have no plan, so it
// takes none. The figures are @tally/reports' (revenue/); this layer checks the query, reads the
// records (the cached history of @tally/reports revenue/history-cache.ts, re-read whenever the stored revenue
// changed; the customer page reads its own records) and shapes the answers (JSON or CSV).
// The daily MRR report, the exchange rates and the conversion of the MRR reports are in
// revenue-daily-routes.ts.

import { monthStart } from '@tally/reports/calendar';
import {
  type AttributionDimension,
  acquisitionFunnel,
  checkMonth,
  checkMonthRange,
  checkRevenueDimension,
  convertMonthly,
  currencyOf,
  customerList,
  customerListPage,
  type DrilldownFigure,
  filterRevenueRecords,
  type MrrInput,
  monthlyRevenue,
  mrrHistory,
  parseRevenueFilters,
  rateTableFor,
  readCustomerAttributes,
  readCustomerRecords,
  readCustomerTouches,
  readCustomerTouchesCached,
  readMrrInputs,
  readMrrInputsCached,
  readRevenueMetadataKeys,
  readStoredMovements,
  readVisitTimeline,
  reconcile,
  revenueAttribution,
  revenueBreakdown,
  revenueDrilldown,
  searchRevenue,
  type Touch,
  type Touchpoint,
} from '@tally/reports/revenue';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { NotFoundError } from '../errors.ts';
import { convertedCsvRow } from './revenue-daily-routes.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

interface MonthsQuery {
  from: string;
  to: string;
  currency?: string;
  by?: AttributionDimension;
  touch?: Touch;
  filters?: string;
  format?: string;
}

/** The records of the customers that `filters` keeps (@tally/reports revenue/filters.ts), attributes as of `until`. */
const restrict = (
  deps: DashboardDeps,
  project: string,
  filters: string | undefined,
  records: readonly MrrInput[],
  until?: number,
) => filterRevenueRecords(deps.warehouse, records, { project, filters: parseRevenueFilters(filters), until });

const touchJson = (t: Touchpoint | null | undefined) =>
  t ? { ...t, start: new Date(t.start).toISOString() } : null;

export function revenueRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrr', async (request, reply) => {
    const q = request.query as {
      from: string;
      to: string;
      currency?: string;
      filters?: string;
      convert_to?: string;
      format?: string;
    };
    checkMonthRange(q.from, q.to);
    parseRevenueFilters(q.filters);
    // As `tally report mrr`, from the cached history.
    const currency = q.currency?.toUpperCase();
    // The rates first: a convert_to without rates is refused before the history is read.
    const rates = q.convert_to ? await rateTableFor(deps.warehouse, q.convert_to) : null;
    const project = request.params.project as string;
    const until = monthStart(q.to, 1);
    const all = await readMrrInputsCached(deps.warehouse, { project, until, currency });
    const records = await restrict(deps, project, q.filters, all, until);
    const report = monthlyRevenue(records, q.from, q.to, currency ? [currency] : undefined);
    if (rates) {
      const converted = convertMonthly(report, rates);
      return answer(
        reply,
        request.headers.accept,
        q.format,
        converted,
        () => converted.map(convertedCsvRow),
        'mrr',
      );
    }
    return answer(reply, request.headers.accept, q.format, report, () => report as never, 'mrr');
  });

  route(app, deps, 'revenueAttribution', async (request, reply) => {
    const q = request.query as unknown as MonthsQuery;
    const project = request.params.project as string;
    checkMonthRange(q.from, q.to);
    const currency = currencyOf(q.currency);
    parseRevenueFilters(q.filters);
    const [all, touches] = await Promise.all([
      readMrrInputsCached(deps.warehouse, { project, until: monthStart(q.to, 1), currency }),
      readCustomerTouchesCached(deps.warehouse, project),
    ]);
    const records = await restrict(deps, project, q.filters, all, monthStart(q.to, 1));
    const body = revenueAttribution(records, {
      from: q.from,
      to: q.to,
      currency,
      by: q.by ?? 'channel',
      touch: q.touch ?? 'first',
      touches,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows as never, 'attribution');
  });

  route(app, deps, 'revenueReconciliation', async (request) => {
    const q = request.query as { month: string; currency?: string };
    const project = request.params.project as string;
    checkMonth(q.month);
    const currency = currencyOf(q.currency);
    const [records, stored] = await Promise.all([
      readMrrInputsCached(deps.warehouse, { project, until: monthStart(q.month, 1), currency }),
      readStoredMovements(deps.warehouse, { project, month: q.month, currency }),
    ]);
    return reconcile(records, { month: q.month, currency, stored });
  });

  route(app, deps, 'revenueRecords', async (request, reply) => {
    const q = request.query as unknown as MonthsQuery & {
      figure: DrilldownFigure;
      key?: string;
      offset?: number;
      limit?: number;
    };
    const project = request.params.project as string;
    checkMonthRange(q.from, q.to);
    const currency = currencyOf(q.currency);
    parseRevenueFilters(q.filters);
    const [all, touches] = await Promise.all([
      readMrrInputsCached(deps.warehouse, { project, until: monthStart(q.to, 1), currency }),
      q.key === undefined ? null : readCustomerTouchesCached(deps.warehouse, project),
    ]);
    const records = await restrict(deps, project, q.filters, all, monthStart(q.to, 1));
    const body = revenueDrilldown(records, {
      figure: q.figure,
      from: q.from,
      to: q.to,
      currency,
      ...(q.offset !== undefined ? { offset: q.offset } : {}),
      ...(q.limit !== undefined ? { limit: q.limit } : {}),
      ...(touches && q.key !== undefined
        ? { group: { by: q.by ?? 'channel', touch: q.touch ?? 'first', key: q.key, touches } }
        : {}),
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.items as never, 'records');
  });

  route(app, deps, 'revenueFunnel', async (request, reply) => {
    const q = request.query as {
      from: string;
      to: string;
      by?: AttributionDimension;
      currency?: string;
      format?: string;
    };
    const project = request.params.project as string;
    const currency = currencyOf(q.currency);
    const records = await readMrrInputsCached(deps.warehouse, { project, currency });
    const body = await acquisitionFunnel(deps.warehouse, records, {
      project,
      timeZone: (await deps.projects.settings(project)).time_zone,
      from: q.from,
      to: q.to,
      by: q.by ?? 'channel',
      currency,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows as never, 'funnel');
  });

  route(app, deps, 'revenueCustomers', async (request, reply) => {
    const q = request.query as {
      currency?: string;
      limit?: number;
      offset?: number;
      filters?: string;
      format?: string;
    };
    const project = request.params.project as string;
    const currency = currencyOf(q.currency);
    parseRevenueFilters(q.filters);
    const all = await readMrrInputsCached(deps.warehouse, { project, currency });
    const records = await restrict(deps, project, q.filters, all);
    const offset = q.offset ?? 0;
    // The touches of the page's customers only: the list's order does not depend on them.
    const { total, customers } = await customerListPage(deps.warehouse, records, {
      project,
      currency,
      offset,
      limit: q.limit ?? 100,
    });
    const body = { currency, total, offset, customers };
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () =>
        customers.map(({ first_touch, ...c }) => ({
          ...c,
          first_touch_channel: first_touch?.channel ?? null,
          first_touch_source: first_touch?.source ?? null,
        })),
      'customers',
    );
  });

  route(app, deps, 'revenueCustomer', async (request) => {
    const project = request.params.project as string;
    const customer = request.params.customer_id as string;
    const [inputs, touches, records, timeline] = await Promise.all([
      readMrrInputs(deps.warehouse, { project, customers: [customer] }),
      readCustomerTouches(deps.warehouse, project, [customer]),
      readCustomerRecords(deps.warehouse, project, customer),
      readVisitTimeline(deps.warehouse, project, customer),
    ]);
    if (inputs.length === 0 && timeline.visits.length === 0 && timeline.identified_at === null)
      throw new NotFoundError('No such customer');
    const currencies = [...new Set(inputs.map((r) => r.currency))].sort();
    const touch = touches.get(customer);
    return {
      customer_id: customer,
      summaries: currencies.flatMap((currency) => customerList(inputs, { currency, touches })),
      first_touch: touchJson(touch?.first),
      last_touch: touchJson(touch?.last),
      identified_at: timeline.identified_at,
      history: mrrHistory(inputs),
      records: records.map(({ project_id: _p, ...r }) => r),
      visits: timeline.visits,
    };
  });

  route(app, deps, 'revenueBreakdown', async (request, reply) => {
    const q = request.query as unknown as Omit<MonthsQuery, 'by'> & { by: string };
    const project = request.params.project as string;
    checkMonthRange(q.from, q.to);
    const currency = currencyOf(q.currency);
    checkRevenueDimension(q.by);
    parseRevenueFilters(q.filters);
    const until = monthStart(q.to, 1);
    const [all, attributes, keys] = await Promise.all([
      readMrrInputsCached(deps.warehouse, { project, until, currency }),
      readCustomerAttributes(deps.warehouse, { project, dimensions: [q.by], until }),
      readRevenueMetadataKeys(deps.warehouse, project),
    ]);
    const records = await restrict(deps, project, q.filters, all, until);
    const values = attributes.get(q.by) ?? new Map<string, string>();
    const body = {
      ...revenueBreakdown(records, { from: q.from, to: q.to, currency, by: q.by, values }),
      metadata_keys: keys,
    };
    return answer(reply, request.headers.accept, q.format, body, () => body.rows as never, 'breakdown');
  });

  route(app, deps, 'revenueSearch', async (request) => {
    const q = request.query as { key: string; value: string; limit?: number };
    const found = await searchRevenue(deps.warehouse, {
      project: request.params.project as string,
      metadata: { [q.key]: q.value },
      limit: q.limit ?? 100,
    });
    return { records: found.map(({ project_id: _p, ...r }) => r) };
  });
}
