// GET …/traffic/*: the dashboard's figures of one project (summary, time series, breakdowns, current
// visitors, the realtime view, goal conversions, funnels), as JSON or CSV. The summary, time series and breakdowns are
// @tally/reports/queries' functions, which `tally report` calls too; this layer reads the project's time
// zone, parses the request into their query value and answers JSON or CSV.
import { createHash } from 'node:crypto';
import {
  trafficBreakdownReport,
  trafficRealtimeReport,
  trafficSummaryReport,
  trafficTimeseriesReport,
} from '@tally/reports/queries';
import {
  currentVisitors,
  funnelSteps,
  goalConversions,
  parseFilters,
  type TrafficQuery,
} from '@tally/reports/traffic';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { annotationsByBucket } from '../annotation-buckets.ts';
import { toCsv, wantsCsv } from '../csv.ts';
import type { DashboardDeps } from '../deps.ts';
import { NotFoundError } from '../errors.ts';
import { route } from './route.ts';

/** Sends rows as CSV when asked (format=csv or Accept: text/csv), else the JSON body. */
export function answer(
  reply: FastifyReply,
  accept: string | undefined,
  format: string | undefined,
  body: unknown,
  rows: () => readonly object[],
  name: string,
): unknown {
  if (!wantsCsv(format, accept)) return body;
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .send(toCsv(rows()));
}

export function trafficRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const queryOf = async (
    project: string,
    q: { from: string; to: string; filters?: string | undefined },
  ): Promise<TrafficQuery> => ({
    project,
    from: q.from,
    to: q.to,
    timeZone: (await deps.projects.settings(project)).time_zone,
    filters: parseFilters(q.filters),
  });

  route(app, deps, 'trafficSummary', async (request, reply) => {
    const q = request.query;
    const query = { ...(await queryOf(request.params.project, q)), compare: q.compare };
    const body = await trafficSummaryReport(deps.warehouse, query);
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () => {
        const { previous, ...rest } = body;
        return [
          { period: 'current', ...rest },
          ...(previous ? [{ period: 'previous', ...previous, time_zone: body.time_zone }] : []),
        ];
      },
      'summary',
    );
  });

  route(app, deps, 'trafficTimeseries', async (request, reply) => {
    const q = request.query;
    const query = {
      ...(await queryOf(request.params.project, q)),
      compare: q.compare,
      interval: q.interval,
    };
    const body = await trafficTimeseriesReport(deps.warehouse, query);
    const { points, previous } = body;
    // The CSV's `annotation` column: the project's notes of each bucket (read only when CSV is asked).
    const notes = wantsCsv(q.format, request.headers.accept)
      ? annotationsByBucket(
          points.map((p) => p.date),
          q.to,
          await deps.projects.annotations(request.params.project),
          query.timeZone,
        )
      : new Map<string, string>();
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () =>
        points.map((p, i) => {
          const before = previous?.points[i];
          return {
            ...p,
            ...(before
              ? Object.fromEntries(Object.entries(before).map(([k, v]) => [`previous_${k}`, v]))
              : {}),
            annotation: notes.get(p.date) ?? '',
          };
        }),
      'timeseries',
    );
  });

  route(app, deps, 'trafficBreakdown', async (request, reply) => {
    const q = request.query;
    const { dimension } = request.params;
    const query = await queryOf(request.params.project, q);
    const body = await trafficBreakdownReport(deps.warehouse, {
      ...query,
      dimension,
      property: q.property,
      limit: q.limit,
      sort: q.sort,
      order: q.order,
    });
    return answer(reply, request.headers.accept, q.format, body, () => body.rows, dimension);
  });

  route(app, deps, 'trafficCurrentVisitors', async (request) => {
    return {
      current_visitors: await currentVisitors(deps.warehouse, {
        project: request.params.project,
        filters: parseFilters(request.query.filters),
      }),
    };
  });

  route(app, deps, 'trafficRealtime', async (request, reply) => {
    const body = await trafficRealtimeReport(deps.warehouse, {
      project: request.params.project,
      filters: parseFilters(request.query.filters),
    });
    return notModifiedOr(reply, request.headers['if-none-match'], body);
  });

  route(app, deps, 'trafficGoals', async (request, reply) => {
    const q = request.query;
    const { project } = request.params;
    const query = await queryOf(project, q);
    const goals = await deps.projects.goals(project);
    const result = await goalConversions(deps.warehouse, query, goals);
    const rows = goals.map((goal, i) => {
      const figures = result.goals[i] ?? { visitors: 0, events: 0 };
      return {
        goal: goal.id,
        name: goal.name,
        visitors: figures.visitors,
        events: figures.events,
        conversion_rate: result.visitors ? figures.visitors / result.visitors : 0,
      };
    });
    const body = { from: query.from, to: query.to, visitors: result.visitors, rows };
    return answer(reply, request.headers.accept, q.format, body, () => rows, 'goals');
  });

  route(app, deps, 'trafficFunnel', async (request, reply) => {
    const q = request.query;
    const { project } = request.params;
    const funnel = await deps.projects.funnel(project, request.params.funnel);
    if (!funnel) throw new NotFoundError('no such funnel');
    const query = await queryOf(project, q);
    const visitors = await funnelSteps(deps.warehouse, query, funnel.steps);
    const steps = funnel.steps.map((step, i) => {
      const n = visitors[i] ?? 0;
      const first = visitors[0] ?? 0;
      const before = i === 0 ? n : (visitors[i - 1] ?? 0);
      return {
        name: step.name || step.event_name || step.path || `Step ${i + 1}`,
        visitors: n,
        conversion_rate: first ? n / first : 0,
        step_conversion_rate: before ? n / before : 0,
      };
    });
    const body = { funnel: funnel.id, name: funnel.name, from: query.from, to: query.to, steps };
    return answer(reply, request.headers.accept, q.format, body, () => steps, 'funnel');
  });
}

/**
 * Answers `body` with a strong ETag (a hash of its JSON), or 304 without a body when the request's
 * If-None-Match names it: a poller whose figures did not change gets a few bytes back and redraws nothing.
 */
export function notModifiedOr(reply: FastifyReply, ifNoneMatch: string | undefined, body: unknown): unknown {
  const etag = `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
  reply.header('etag', etag);
  const named = (ifNoneMatch ?? '').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (named.includes(etag) || named.includes('*')) return reply.code(304).send();
  return body;
}
