// Whether an alert rule's condition holds at an instant (docs/alerts.md), from the figures the rest of the
// dashboard shows: the last landed record per type of the Health view (@tally/reports ingestion-health.ts),
// the record log's dead letters (as health-routes.ts reads them), hourly pageviews of the traffic time
// series (UTC hours), and the daily MRR report's churn and contraction (UTC days, as every revenue report).
// A condition that cannot be told (no record log, a part that did not answer) is `cannot_evaluate` with
// why: it never fires, and an incident already open stays open until the condition can be told again.
import { formatMicros, toMicros } from '@tally/contract';
import { DAY_MS, utcDayOf } from '@tally/reports/calendar';
import { ingestionHealth } from '@tally/reports/ingestion-health';
import { revenueMrrDailyReport } from '@tally/reports/queries';
import { trafficTimeseries } from '@tally/reports/traffic';
import type { AlertRule } from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import type { HealthLog } from '../deps.ts';

export type Condition =
  | { status: 'ok'; reason: string | null }
  | { status: 'firing'; reason: string }
  | { status: 'cannot_evaluate'; reason: string };

export interface ConditionDeps {
  warehouse: Warehouse;
  /** The record log (dead letters); absent: a dead_letters rule cannot be evaluated. */
  log?: HealthLog | undefined;
}

const HOUR_MS = 3_600_000;

/** The rule in a few words, for messages and the web app ("pageview records stalled for 15 minutes"). */
export function describeRule(rule: AlertRule): string {
  switch (rule.kind) {
    case 'stalled':
      return `no ${rule.record_type} record landed for ${rule.threshold} minutes`;
    case 'dead_letters':
      return `more than ${rule.threshold} dead letters in an hour`;
    case 'traffic':
      return `pageviews of an hour ${rule.direction === 'drop' ? 'down' : 'up'} ${rule.threshold}% or more on the same hour a week before (at least ${rule.min_baseline} then)`;
    case 'mrr_churn':
      return `MRR churned (churn + contraction) over ${formatMicros(toMicros(rule.threshold))}${rule.currency ? ` ${rule.currency}` : ''} in a UTC day`;
  }
}

export async function evaluateCondition(
  rule: AlertRule,
  project: string,
  deps: ConditionDeps,
  now: number,
): Promise<Condition> {
  switch (rule.kind) {
    case 'stalled':
      return stalled(rule, project, deps, now);
    case 'dead_letters':
      return deadLetters(rule, project, deps, now);
    case 'traffic':
      return traffic(rule, project, deps, now);
    case 'mrr_churn':
      return mrrChurn(rule, project, deps, now);
  }
}

async function stalled(
  rule: AlertRule,
  project: string,
  deps: ConditionDeps,
  now: number,
): Promise<Condition> {
  const health = await ingestionHealth(deps.warehouse, { project, now, stallMinutes: rule.threshold });
  const type = health.types.find((t) => t.type === rule.record_type);
  if (!type || type.minutes_since_last === null)
    return { status: 'ok', reason: `no ${rule.record_type} record has landed yet` };
  if (type.minutes_since_last < rule.threshold) return { status: 'ok', reason: null };
  return {
    status: 'firing',
    reason: `no ${rule.record_type} record has landed for ${type.minutes_since_last} minutes (the last was received at ${type.last_received_at})`,
  };
}

async function deadLetters(
  rule: AlertRule,
  project: string,
  deps: ConditionDeps,
  now: number,
): Promise<Condition> {
  if (!deps.log)
    return { status: 'cannot_evaluate', reason: 'the dashboard runs without the record log (dead letters)' };
  let letters: Awaited<ReturnType<HealthLog['deadLetters']['list']>>;
  try {
    letters = await deps.log.deadLetters.list();
  } catch {
    return { status: 'cannot_evaluate', reason: 'the record log did not answer (dead letters)' };
  }
  const count = letters.filter(
    (l) => l.record?.project_id === project && l.failed_at > now - HOUR_MS && l.failed_at <= now,
  ).length;
  if (count <= rule.threshold) return { status: 'ok', reason: null };
  return {
    status: 'firing',
    reason: `${count} records were set aside as dead letters in the last hour (more than ${rule.threshold})`,
  };
}

/** The last complete UTC hour before `now` and its pageviews, read from the hourly time series. */
async function hourPageviews(warehouse: Warehouse, project: string, hourStart: number): Promise<number> {
  const day = utcDayOf(hourStart);
  const label = `${day} ${new Date(hourStart).toISOString().slice(11, 13)}:00`;
  const points = await trafficTimeseries(
    warehouse,
    { project, from: day, to: day, timeZone: 'UTC', filters: [] },
    'hour',
  );
  return points.find((p) => p.date === label)?.pageviews ?? 0;
}

async function traffic(
  rule: AlertRule,
  project: string,
  deps: ConditionDeps,
  now: number,
): Promise<Condition> {
  const hour = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
  const [current, baseline] = await Promise.all([
    hourPageviews(deps.warehouse, project, hour),
    hourPageviews(deps.warehouse, project, hour - 7 * DAY_MS),
  ]);
  const hourText = `${new Date(hour).toISOString().slice(0, 13)}:00 UTC`;
  const minBaseline = rule.min_baseline ?? 1;
  if (baseline < minBaseline)
    return {
      status: 'ok',
      reason: `the same hour a week before had ${baseline} pageviews, fewer than ${minBaseline} to compare with`,
    };
  const change = ((current - baseline) / baseline) * 100;
  const held = rule.direction === 'drop' ? -change >= rule.threshold : change >= rule.threshold;
  if (!held) return { status: 'ok', reason: null };
  return {
    status: 'firing',
    reason: `${current} pageviews in the hour from ${hourText}, ${Math.round(Math.abs(change))}% ${change >= 0 ? 'up' : 'down'} on ${baseline} the same hour a week before`,
  };
}

async function mrrChurn(
  rule: AlertRule,
  project: string,
  deps: ConditionDeps,
  now: number,
): Promise<Condition> {
  const day = utcDayOf(now);
  const rows = await revenueMrrDailyReport(deps.warehouse, {
    project,
    from: day,
    to: day,
    currency: rule.currency ?? undefined,
  });
  const limit = toMicros(rule.threshold);
  const over: string[] = [];
  for (const row of rows) {
    if (!('churn' in row)) continue;
    const churned = toMicros(row.churn) + toMicros(row.contraction);
    if (churned > limit)
      over.push(
        `${formatMicros(churned)} ${row.currency} (churn ${row.churn}, contraction ${row.contraction})`,
      );
  }
  if (over.length === 0) return { status: 'ok', reason: null };
  return {
    status: 'firing',
    reason: `MRR churned on ${day} (UTC) so far: ${over.join('; ')}, over ${formatMicros(limit)}`,
  };
}
