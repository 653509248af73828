// GET …/health: a project's ingestion health. From the warehouse: records landed per minute by type and
// the last of each type, with stalled types (reports/ingestion-health.ts). From the record log, when the
// dashboard runs beside it (npm start hands it over; a dashboard of its own has none): the consumer
// groups' lag (the embedded log's; Kafka's is read with Kafka's own tools) and the project's dead letters
// by type and reason (error codes only: a letter's error text may quote the record). What cannot be told
// is listed in `unavailable`, never shown as zero.
import { ingestionHealth } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';

/** Most recent dead letters listed per project. */
const RECENT_LETTERS = 20;

export function healthRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'projectHealth', async (request) => {
    const project = request.params.project as string;
    const q = request.query as { stall_minutes?: number };
    const unavailable: string[] = [
      'records refused by the gateway per project: the gateway counts refusals per status, not per project',
      'age of the oldest record not yet landed: the log does not tell it per project',
    ];
    const figures = await ingestionHealth(deps.warehouse, { project, stallMinutes: q.stall_minutes });
    let groups = null;
    let deadLetters = null;
    const log = deps.log;
    if (log?.groups) {
      groups = log.groups().map(({ group, topic, position, lag }) => ({ group, topic, position, lag }));
    } else {
      unavailable.push('consumer lag: not exposed by this record log to the dashboard');
    }
    if (log) {
      const letters = (await log.deadLetters.list()).filter((l) => l.record?.project_id === project);
      const reasons = new Map<string, { type: string; error_code: string; count: number }>();
      for (const l of letters) {
        const key = `${l.topic}\u0000${l.error_code}`;
        const reason = reasons.get(key) ?? { type: l.topic, error_code: l.error_code, count: 0 };
        reason.count += 1;
        reasons.set(key, reason);
      }
      deadLetters = {
        count: letters.length,
        by_reason: [...reasons.values()].sort((a, b) => b.count - a.count),
        recent: letters
          .slice(-RECENT_LETTERS)
          .reverse()
          .map((l) => ({
            id: l.id,
            type: l.topic,
            error_code: l.error_code,
            failed_at: new Date(l.failed_at).toISOString(),
          })),
      };
    } else {
      unavailable.push('dead letters: the dashboard runs without the record log');
    }
    return { ...figures, consumer_groups: groups, dead_letters: deadLetters, unavailable };
  });
}
