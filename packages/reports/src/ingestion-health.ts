// What the warehouse can tell of a project's ingestion (docs/ingestion-health.md): records landed
// per minute by type over the last hour and the last record of each type, from record_ids (every landed
// record's id, type and the time the gateway received it). A type that was landing in the last day and
// has landed nothing for `stallMinutes` is stalled: the dashboard shows it at a glance, so stale revenue
// figures are never shown as if current. Consumer lag and dead letters come from the record log, not from
// here (services/dashboard/src/routes/health-routes.ts).
import { RECORD_TYPES } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';

export type TypeStatus = 'ok' | 'stalled' | 'idle' | 'none';

export interface TypeHealth {
  type: string;
  /** When the gateway received the newest landed record of this type, ISO 8601; null if none ever. */
  last_received_at: string | null;
  minutes_since_last: number | null;
  /** ok: landing; stalled: landed in the last day but nothing for stall_minutes; idle: nothing for a day. */
  status: TypeStatus;
  landed_last_hour: number;
  /** Records landed per minute over the last 60 minutes, oldest first (by the minute they were received). */
  per_minute: number[];
}

export async function ingestionHealth(
  warehouse: Warehouse,
  options: { project: string; now?: number; stallMinutes?: number },
): Promise<{ generated_at: string; stall_minutes: number; types: TypeHealth[] }> {
  const now = options.now ?? Date.now();
  const stallMinutes = options.stallMinutes ?? 15;
  const hourStart = Math.floor(now / 60_000) * 60_000 - 59 * 60_000;
  const [perMinute, last] = await Promise.all([
    warehouse.query<{ type: string; minute_ms: number | string; n: number | string }>(
      `SELECT type, toUnixTimestamp(toStartOfMinute(received_at)) * 1000 AS minute_ms, count() AS n
       FROM record_ids FINAL
       WHERE project_id = {project:String} AND received_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
       GROUP BY type, minute_ms`,
      { project: options.project, start: hourStart },
    ),
    warehouse.query<{ type: string; last_ms: number | string }>(
      `SELECT type, toUnixTimestamp64Milli(max(received_at)) AS last_ms FROM record_ids
       WHERE project_id = {project:String} GROUP BY type`,
      { project: options.project },
    ),
  ]);
  const types: TypeHealth[] = RECORD_TYPES.map((type) => {
    const minutes = new Array<number>(60).fill(0);
    for (const row of perMinute) {
      if (row.type !== type) continue;
      const index = Math.round((Number(row.minute_ms) - hourStart) / 60_000);
      if (index >= 0 && index < 60) minutes[index] = (minutes[index] as number) + Number(row.n);
    }
    const lastMs = last.find((row) => row.type === type)?.last_ms;
    const since = lastMs === undefined ? null : Math.max(0, Math.floor((now - Number(lastMs)) / 60_000));
    const status: TypeStatus =
      since === null ? 'none' : since >= 24 * 60 ? 'idle' : since >= stallMinutes ? 'stalled' : 'ok';
    return {
      type,
      last_received_at: lastMs === undefined ? null : new Date(Number(lastMs)).toISOString(),
      minutes_since_last: since,
      status,
      landed_last_hour: minutes.reduce((a, b) => a + b, 0),
      per_minute: minutes,
    };
  });
  return { generated_at: new Date(now).toISOString(), stall_minutes: stallMinutes, types };
}
