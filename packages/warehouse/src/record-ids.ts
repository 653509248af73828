// Record ids already stored per project (the record_ids table, schemas/clickhouse/006_record_ids.sql):
// what the consumers look up so that a project keeps the first copy of every record id.
import { parameterLists } from './parameter-lists.ts';
import type { Row, Warehouse } from './warehouse.ts';

/**
 * Ids looked up per query at most; the size of the list's parameter bounds it first (1,680 UUIDs:
 * parameter-lists.ts), so a batch of any size is a few lookups that any ClickHouse accepts.
 */
const IDS_PER_QUERY = 10_000;

/** The ids among `ids` (UUIDs, lower case) that `project` has stored already. */
export async function storedRecordIds(
  warehouse: Warehouse,
  project: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const list of parameterLists(ids, IDS_PER_QUERY)) {
    const rows = await warehouse.query<{ id: string }>(
      `SELECT DISTINCT toString(id) AS id FROM record_ids
       WHERE project_id = {project:String} AND id IN {ids:Array(String)}`,
      { project, ids: list },
    );
    for (const row of rows) stored.add(row.id);
  }
  return stored;
}

/**
 * When the stored copy of each of `ids` arrived (ms), for those `project` has: a copy that arrived at the
 * same time is the stored record itself, delivered again (the consumer's crash between two writes).
 */
export async function storedArrivals(
  warehouse: Warehouse,
  project: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const arrivals = new Map<string, number>();
  for (const list of parameterLists(ids, IDS_PER_QUERY)) {
    const rows = await warehouse.query<{ id: string; received: number }>(
      `SELECT toString(id) AS id, toUnixTimestamp64Milli(min(received_at)) AS received FROM record_ids
       WHERE project_id = {project:String} AND id IN {ids:Array(String)} GROUP BY id`,
      { project, ids: list },
    );
    for (const row of rows) arrivals.set(row.id, row.received);
  }
  return arrivals;
}

/** The record_ids row of a stored record. */
export function recordIdRow(record: {
  project_id: string;
  id: string;
  type: string;
  received_at: number;
}): Row {
  return { project_id: record.project_id, id: record.id, type: record.type, received_at: record.received_at };
}
