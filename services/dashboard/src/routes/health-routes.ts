// GET …/health: a project's ingestion health. From the warehouse: records landed per minute by type and
// the last of each, with stalled types (@tally/reports ingestion-health.ts). From the record log (npm
// start's, or the one a dashboard of its own opens: health-log.ts): each consumer group's lag and the age of
// the oldest record it has not landed (of the whole log: the log does not index by project), and the
// project's dead letters by type and reason (error codes only: a letter's error text may quote the
// record). From the state store: the requests the gateway refused for the project, per hour and status
// (a 401 has no project and is never among them). From the engine: parts of the warehouse it detached as
// damaged, whose records are missing until re-landed (lost_records; damaged-parts.ts). What cannot be told
// is listed in `unavailable`, never shown as zero.
// Each consumer group's progress (`consumers`): under npm start from the consumers themselves (stalled:
// records waiting and no batch committed for CONSUMER_STALL_MS, and why: the readiness's own words); a
// dashboard of its own sees the log only, where a group whose oldest record not landed has waited longer
// than CONSUMER_STALL_MS is shown stalled too (whether it is stuck or slowly catching up, its /readyz says).
// On Kafka, from the brokers: the topics' settings against the configuration (log_settings: each
// difference), and each topic's retention.ms, against which a group's oldest record not landed is
// measured: Kafka deletes records by age whether they were read or not, so a group whose oldest record
// is older than RETENTION_WARNING of it is flagged (near_retention) before it loses records.

import { ingestionHealth } from '@tally/reports/ingestion-health';
import { RELAND_COMMAND, warehouseDamage } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';

/** Most recent dead letters listed per project. */
const RECENT_LETTERS = 20;
/** Hours of refusals shown. */
const REFUSAL_HOURS = 24;
const HOUR_MS = 3_600_000;
/** The share of a topic's retention after which a group's oldest record not landed is flagged. */
export const RETENTION_WARNING = 0.8;

export function healthRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'projectHealth', async (request) => {
    const project = request.params.project;
    const q = request.query;
    const now = Date.now();
    const unavailable: string[] = [];
    const log = deps.log;
    const unreachable = (what: string) => (error: unknown) => {
      request.log.warn({ err: error }, `health: ${what} could not be read from the record log`);
      unavailable.push(`${what}: the record log did not answer`);
      return null;
    };
    const [figures, backlog, settings, letters, refusals, damage] = await Promise.all([
      ingestionHealth(deps.warehouse, { project, stallMinutes: q.stall_minutes, now }),
      log?.backlog ? log.backlog().catch(unreachable('consumer lag')) : null,
      log?.checkSettings ? log.checkSettings().catch(unreachable('Kafka topic settings')) : null,
      log ? log.deadLetters.list().catch(unreachable('dead letters')) : null,
      deps.refusals ? deps.refusals.read(project, now - (REFUSAL_HOURS - 1) * HOUR_MS) : null,
      warehouseDamage(deps.warehouse).catch((error: unknown) => {
        request.log.warn({ err: error }, 'health: damaged parts could not be read from the warehouse');
        unavailable.push('lost records: the warehouse did not list its detached parts');
        return null;
      }),
    ]);
    if (!log?.backlog) unavailable.push('consumer lag: the dashboard runs without the record log');
    if (!log) unavailable.push('dead letters: the dashboard runs without the record log');
    if (!deps.refusals) unavailable.push('records refused by the gateway: the dashboard has no state store');

    const retentionOf = (topic: string) =>
      settings?.retention.find((r) => r.topic === topic)?.retention_ms ?? null;
    const groups =
      backlog?.map(({ group, topic, lag, oldest_at }) => {
        const retentionMs = retentionOf(topic);
        return {
          group,
          topic,
          lag,
          oldest_at: oldest_at === null ? null : new Date(oldest_at).toISOString(),
          oldest_age_seconds: oldest_at === null ? null : Math.max(0, Math.floor((now - oldest_at) / 1000)),
          retention_seconds: retentionMs === null ? null : Math.floor(retentionMs / 1000),
          near_retention:
            oldest_at !== null && retentionMs !== null && now - oldest_at >= RETENTION_WARNING * retentionMs,
        };
      }) ?? null;
    let oldest: { group: string; topic: string; at: string; age_seconds: number } | null = null;
    for (const g of groups ?? []) {
      if (g.oldest_at === null || g.oldest_age_seconds === null) continue;
      if (!oldest || g.oldest_age_seconds > oldest.age_seconds) {
        oldest = { group: g.group, topic: g.topic, at: g.oldest_at, age_seconds: g.oldest_age_seconds };
      }
    }

    const consumers = consumerProgress(deps, groups, now);
    const hold = deps.ingestionHold?.() ?? null;

    let deadLetters = null;
    if (letters) {
      const ours = letters.filter((l) => l.record?.project_id === project);
      const reasons = new Map<string, { type: string; error_code: string; count: number }>();
      for (const l of ours) {
        const key = `${l.topic}\u0000${l.error_code}`;
        const reason = reasons.get(key) ?? { type: l.topic, error_code: l.error_code, count: 0 };
        reason.count += 1;
        reasons.set(key, reason);
      }
      deadLetters = {
        count: ours.length,
        by_reason: [...reasons.values()].sort((a, b) => b.count - a.count),
        recent: ours
          .slice(-RECENT_LETTERS)
          .reverse()
          .map((l) => ({
            id: l.id,
            type: l.topic,
            error_code: l.error_code,
            failed_at: new Date(l.failed_at).toISOString(),
          })),
      };
    }

    let refused = null;
    if (refusals) {
      const byStatus = new Map<number, number>();
      for (const r of refusals) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + r.count);
      refused = {
        from: new Date(Math.floor(now / HOUR_MS) * HOUR_MS - (REFUSAL_HOURS - 1) * HOUR_MS).toISOString(),
        hours: refusals.map((r) => ({
          hour: new Date(r.hour).toISOString(),
          status: r.status,
          count: r.count,
        })),
        by_status: [...byStatus].sort((a, b) => a[0] - b[0]).map(([status, count]) => ({ status, count })),
        total: refusals.reduce((sum, r) => sum + r.count, 0),
      };
    }
    return {
      ...figures,
      consumer_groups: groups,
      consumers,
      ingestion_held_back: hold && {
        since: new Date(hold.since).toISOString(),
        held_seconds: seconds(now - hold.since),
        group: hold.group,
        lag: hold.lag,
        max_lag: hold.max_lag,
        reopens_below: hold.reopens_below,
      },
      oldest_not_landed: groups ? oldest : null,
      log_settings: settings
        ? { checked_at: new Date(settings.checked_at).toISOString(), mismatches: settings.mismatches }
        : null,
      dead_letters: deadLetters,
      refused,
      lost_records:
        damage && !damage.ok
          ? {
              parts: damage.parts,
              action: `stop Tally, run \`${RELAND_COMMAND}\`, start Tally: the records are landed again from the record log`,
            }
          : null,
      unavailable,
    };
  });
}

interface GroupLag {
  group: string;
  lag: number;
  oldest_at: string | null;
  oldest_age_seconds: number | null;
}

/** A consumer group's progress as the health answer gives it. */
interface GroupProgress {
  group: string;
  lag: number;
  status: 'ok' | 'stalled';
  stalled_since: string | null;
  stalled_seconds: number | null;
  reason: string | null;
  source: 'consumers' | 'log';
}

/** Whole seconds of a duration in ms (never negative). */
const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));

/** Each consumer group's progress: the consumers' own account when they run here, else the log's. */
function consumerProgress(
  deps: DashboardDeps,
  groups: readonly GroupLag[] | null,
  now: number,
): GroupProgress[] | null {
  if (deps.consumers) {
    return deps.consumers.states().map(
      (s): GroupProgress => ({
        group: s.group,
        lag: s.lag,
        status: s.stalled_since === null ? 'ok' : 'stalled',
        stalled_since: s.stalled_since === null ? null : new Date(s.stalled_since).toISOString(),
        stalled_seconds: s.stalled_since === null ? null : seconds(now - s.stalled_since),
        reason: s.reason,
        source: 'consumers',
      }),
    );
  }
  if (!groups) return null;
  const stallMs = deps.config.CONSUMER_STALL_MS;
  const byGroup = new Map<string, { lag: number; oldest: number | null }>();
  for (const g of groups) {
    const entry = byGroup.get(g.group) ?? { lag: 0, oldest: null };
    entry.lag += g.lag;
    const at = g.oldest_at === null ? null : Date.parse(g.oldest_at);
    if (at !== null && (entry.oldest === null || at < entry.oldest)) entry.oldest = at;
    byGroup.set(g.group, entry);
  }
  return [...byGroup].map(([group, { lag, oldest }]): GroupProgress => {
    const stalled = lag > 0 && oldest !== null && now - oldest >= stallMs;
    return {
      group,
      lag,
      status: stalled ? 'stalled' : 'ok',
      stalled_since: stalled && oldest !== null ? new Date(oldest).toISOString() : null,
      stalled_seconds: stalled && oldest !== null ? seconds(now - oldest) : null,
      reason: stalled
        ? `${lag} records waiting, the oldest for more than ${seconds(stallMs)} s (CONSUMER_STALL_MS); ` +
          "the consumer's /readyz says why"
        : null,
      source: 'log',
    };
  });
}
