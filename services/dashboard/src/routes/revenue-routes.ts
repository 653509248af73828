// GET …/revenue/*: revenue figures of a project, which a share link shows only when its creator included
// revenue (access `revenue`): the monthly MRR report, MRR by first or last touch, the reconciliation of a
// month, the drill-down of any figure, the acquisition funnel, the customers and a customer's page, the
// breakdown by plan, interval, … or metadata key, and the metadata search. `filters` (@tally/reports
// revenue/filters.ts) narrows the MRR report, attribution, breakdown, drill-down and customers to the
// customers it keeps; the funnel counts visitors, which have no plan, so it takes none. Each report is one
// function of @tally/reports/queries, which `tally report` calls too; this layer parses the request into its
// query value and answers JSON or CSV. The daily MRR report, the exchange rates and the CSV of a converted
// report are in revenue-daily-routes.ts.

import {
  revenueAttributionReport,
  revenueBreakdownReport,
  revenueCustomerReport,
  revenueCustomersReport,
  revenueFunnelReport,
  revenueMrrReport,
  revenueReconciliationReport,
  revenueRecordsReport,
} from '@tally/reports/queries';
import {
  type AttributionDimension,
  type ConvertedMonth,
  type DrilldownFigure,
  parseRevenueFilters,
  searchRevenue,
  type Touch,
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

export function revenueRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrr', async (request, reply) => {
    const q = request.query as unknown as MonthsQuery & { convert_to?: string };
    const body = await revenueMrrReport(deps.warehouse, {
      project: request.params.project as string,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      convert_to: q.convert_to,
    });
    const rows = () =>
      q.convert_to
        ? (body as ConvertedMonth[]).map(convertedCsvRow)
        : (body as never as Record<string, unknown>[]);
    return answer(reply, request.headers.accept, q.format, body, rows, 'mrr');
  });

  route(app, deps, 'revenueAttribution', async (request, reply) => {
    const q = request.query as unknown as MonthsQuery;
    const body = await revenueAttributionReport(deps.warehouse, {
      project: request.params.project as string,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      by: q.by,
      touch: q.touch,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows as never, 'attribution');
  });

  route(app, deps, 'revenueReconciliation', async (request) => {
    const q = request.query as { month: string; currency?: string };
    return revenueReconciliationReport(deps.warehouse, {
      project: request.params.project as string,
      month: q.month,
      currency: q.currency,
    });
  });

  route(app, deps, 'revenueRecords', async (request, reply) => {
    const q = request.query as unknown as MonthsQuery & {
      figure: DrilldownFigure;
      key?: string;
      offset?: number;
      limit?: number;
    };
    const body = await revenueRecordsReport(deps.warehouse, {
      project: request.params.project as string,
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
    const body = await revenueFunnelReport(deps.warehouse, {
      project,
      timeZone: (await deps.projects.settings(project)).time_zone,
      from: q.from,
      to: q.to,
      by: q.by,
      currency: q.currency,
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
    const body = await revenueCustomersReport(deps.warehouse, {
      project: request.params.project as string,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      offset: q.offset,
      limit: q.limit,
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
      project: request.params.project as string,
      customer_id: request.params.customer_id as string,
    });
    if (!body) throw new NotFoundError('No such customer');
    return body;
  });

  route(app, deps, 'revenueBreakdown', async (request, reply) => {
    const q = request.query as unknown as Omit<MonthsQuery, 'by'> & { by: string };
    const body = await revenueBreakdownReport(deps.warehouse, {
      project: request.params.project as string,
      from: q.from,
      to: q.to,
      currency: q.currency,
      filters: parseRevenueFilters(q.filters),
      by: q.by,
    });
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
