// Record ids already stored per project (the record_ids table, schemas/clickhouse/006_record_ids.sql):
// what the consumers look up so that a project keeps the first copy of every record id. The table keeps an
// id RECORD_IDS_KEPT_DAYS after its record arrived (a TTL, migration 010): that is the window in which a
// copy of a record is recognised; a copy arriving later is stored again. The record log keeps records far
// less long (LOG_RETENTION_HOURS, Kafka's retention), and clients retry for minutes, not weeks.
import type { RowOf } from './columns.ts';
import { concurrently } from './concurrently.ts';
import { crossProjectLookups } from './parameter-lists.ts';
import type { Warehouse } from './warehouse.ts';

/**
 * Ids looked up per query at most: a batch of the default size (CONSUMER_BATCH_SIZE) in one. Over HTTP
 * the size of the list's parameter bounds it first (1,680 UUIDs: parameter-lists.ts), so a batch of any
 * size is a few lookups that any ClickHouse accepts; chDB takes the whole list. Each lookup reads every
 * granule of record_ids that holds one of its ids, and random ids are in nearly all of them: a lookup costs
 * about a scan of the table, whatever its list's length, so fewer lists is less work.
 */
const IDS_PER_QUERY = 20_000;

/** The ids among `ids` (UUIDs, lower case) that `project` has stored already. */
export async function storedRecordIds(
  warehouse: Warehouse,
  project: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const arrivals = await storedArrivals(
    warehouse,
    ids.map((id) => ({ project, id })),
  );
  return new Set(ids.filter((id) => arrivals.has(recordKey(project, id))));
}

/** How long record_ids keeps an id (its TTL in schemas/clickhouse/010_consumer_state.sql; a test keeps them equal). */
export const RECORD_IDS_KEPT_DAYS = 35;

/** Lookups of one batch in flight at once. */
const LOOKUPS_AT_ONCE = 4;

/** The key of a project's record id in the maps below. */
export const recordKey = (project: string, id: string) => `${project}\n${id}`;

/**
 * When the stored copy of each record arrived (ms), for the records (project and id, any number of
 * projects) stored already, by recordKey: a copy that arrived at the same time is the stored record
 * itself, delivered again (the consumer's crash between two writes). The ids of every project are looked
 * up together (crossProjectLookups), a few lists side by side; a row of another project than the one an
 * id was asked for (a client reusing an id across projects) is left out.
 */
export async function storedArrivals(
  warehouse: Warehouse,
  records: readonly { project: string; id: string }[],
): Promise<Map<string, number>> {
  const asked = new Set(records.map(({ project, id }) => recordKey(project, id)));
  const arrivals = new Map<string, number>();
  const lookups = crossProjectLookups(
    records,
    (record) => record.id,
    IDS_PER_QUERY,
    warehouse.listParameterBytes,
  );
  await concurrently(lookups, LOOKUPS_AT_ONCE, async ({ values, projects }) => {
    // The ids as UUIDs, the column's type, and the text under another name than the column's: where the
    // WHERE clause's `id` was `toString(id)` (the alias), the primary key's index was of no use, and every
    // row of the table was turned into text (measured: 40 ms for a list of 20,000 against 2.5 million
    // stored ids, 26 ms this way).
    const rows = await warehouse.query<{ project: string; record_id: string; received: number }>(
      `SELECT project_id AS project, toString(id) AS record_id, toUnixTimestamp64Milli(min(received_at)) AS received
       FROM record_ids WHERE project_id IN {projects:Array(String)} AND id IN {ids:Array(UUID)}
       GROUP BY project_id, id`,
      { projects, ids: values },
    );
    for (const row of rows) {
      const key = recordKey(row.project, row.record_id);
      if (asked.has(key)) arrivals.set(key, Number(row.received));
    }
  });
  return arrivals;
}

/** The columns of record_ids the consumers write (landed_at is the table's: DEFAULT now()). */
export const RECORD_ID_COLUMNS = {
  project_id: 'String',
  id: 'UUID',
  type: 'String',
  received_at: 'DateTime64',
} as const;

export type RecordIdRow = RowOf<typeof RECORD_ID_COLUMNS>;

/** The record_ids row of a stored record. */
export function recordIdRow(record: RecordIdRow): RecordIdRow {
  return { project_id: record.project_id, id: record.id, type: record.type, received_at: record.received_at };
}
