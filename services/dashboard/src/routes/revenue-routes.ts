// GET …/revenue/*: revenue figures of a project, which a share link shows only when its creator included
// revenue (access `revenue`): the monthly MRR report, the cohorts, MRR by first or last touch, the reconciliation of a
// month, the drill-down of any figure, the acquisition funnel, the customers and a customer's page, the
// breakdown by plan, interval, … or metadata key, and the metadata search. `filters` (@tally/reports
// revenue/filters.ts) narrows the MRR report, attribution, breakdown, drill-down and customers to the
// customers it keeps; the funnel counts visitors, which have no plan, so it takes none. Each report is one
// function of @tally/reports/queries, which `tally report` calls too; this layer parses the request into its
// query value and answers JSON or CSV. The daily MRR report, the exchange rates and the CSV of a converted
// report are in revenue-daily-routes.ts.

import { addDays, addMonths } from '@tally/reports/calendar';
import {
  revenueAttributionReport,
  revenueBreakdownReport,
  revenueCohortsReport,
  revenueCustomerReport,
  revenueCustomersReport,
  revenueFunnelReport,
  revenueMrrReport,
  revenueReconciliationReport,
  revenueRecordsReport,
} from '@tally/reports/queries';
import { parseRevenueFilters, searchRevenue } from '@tally/reports/revenue';
import type { FastifyInstance } from 'fastify';
import { wantsCsv } from '../csv.ts';
import type { DashboardDeps } from '../deps.ts';
import { NotFoundError } from '../errors.ts';
import { type MrrRow, mrrCsvNotes, mrrCsvRow } from './revenue-daily-routes.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

export function revenueRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrr', async (request, reply) => {
    const q = request.query;
    const body = await revenueMrrReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      convert_to: q.convert_to,
    });
    const rows: readonly MrrRow[] = body;
    const csv = wantsCsv(q.format, request.headers.accept);
    const months = rows.map((r) => ('month' in r ? `${r.month}-01` : ''));
    const lastDay = addDays(`${addMonths(q.to, 1)}-01`, -1);
    const notes = await mrrCsvNotes(deps, request.params.project, months, lastDay, csv);
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () => rows.map((r) => mrrCsvRow(r, notes)),
      'mrr',
    );
  });

  route(app, deps, 'revenueCohorts', async (request) => {
    const q = request.query;
    return revenueCohortsReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      convert_to: q.convert_to,
    });
  });

  route(app, deps, 'revenueAttribution', async (request, reply) => {
    const q = request.query;
    const body = await revenueAttributionReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      by: q.by,
      touch: q.touch,
      convert_to: q.convert_to,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows, 'attribution');
  });

  route(app, deps, 'revenueReconciliation', async (request) => {
    const q = request.query;
    return revenueReconciliationReport(deps.warehouse, {
      project: request.params.project,
      month: q.month,
      currency: q.currency,
    });
  });

  route(app, deps, 'revenueRecords', async (request, reply) => {
    const q = request.query;
    const body = await revenueRecordsReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      by: q.by,
      touch: q.touch,
      figure: q.figure,
      key: q.key,
      offset: q.offset,
      limit: q.limit,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.items, 'records');
  });

  route(app, deps, 'revenueFunnel', async (request, reply) => {
    const q = request.query;
    const project = request.params.project;
    const body = await revenueFunnelReport(deps.warehouse, {
      project,
      timeZone: (await deps.projects.settings(project)).time_zone,
      from: q.from,
      to: q.to,
      by: q.by,
      currency: q.currency,
      convert_to: q.convert_to,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows, 'funnel');
  });

  route(app, deps, 'revenueCustomers', async (request, reply) => {
    const q = request.query;
    const body = await revenueCustomersReport(deps.warehouse, {
      project: request.params.project,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      offset: q.offset,
      limit: q.limit,
      search: q.search,
      status: q.status,
      sort: q.sort,
      order: q.order,
      convert_to: q.convert_to,
    });
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () =>
        body.customers.map(({ first_touch, ...c }) => ({
          ...c,
          first_touch_channel: first_touch?.channel ?? null,
          first_touch_source: first_touch?.source ?? null,
        })),
      'customers',
    );
  });

  route(app, deps, 'revenueCustomer', async (request) => {
    const body = await revenueCustomerReport(deps.warehouse, {
      project: request.params.project,
      customer_id: request.params.customer_id,
      convert_to: request.query.convert_to,
    });
    if (!body) throw new NotFoundError('No such customer');
    return body;
  });

  route(app, deps, 'revenueBreakdown', async (request, reply) => {
    const q = request.query;
    const body = await revenueBreakdownReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      by: q.by,
      convert_to: q.convert_to,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows, 'breakdown');
  });

  route(app, deps, 'revenueSearch', async (request) => {
    const q = request.query;
    const found = await searchRevenue(deps.warehouse, {
      project: request.params.project,
      metadata: { [q.key]: q.value },
      limit: q.limit ?? 100,
    });
    return { records: found.map(({ project_id: _p, ...r }) => r) };
  });
}
