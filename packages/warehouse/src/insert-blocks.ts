// Inserts into partitioned tables, cut so that no INSERT block spans more partitions than the engine takes.
// ClickHouse refuses an insert block whose rows fall in more than `max_partitions_per_insert_block`
// partitions (100 by default; error 252, "Too many partitions for single INSERT block"), and retrying the
// same rows changes nothing. `events` and `visits` are partitioned by month (of the event, of the visit's
// start), so a batch of records dated in many months (a backfill of a long history, or a client sending
// timestamps years apart) would stop the consumer that lands it. Both backends insert through
// `insertBlocks`: the rows grouped by partition, in order within each, and at most
// PARTITIONS_PER_INSERT partitions per statement. Each statement writes a part per partition either way,
// so a batch of one month is one statement, as before.
import type { Row } from './warehouse.ts';

/**
 * Partitions per INSERT statement: half the engine's default limit, so that a server configured with a
 * lower one still takes most batches as they are (a batch it refuses anyway is landed in halves by the
 * consumers: see WarehouseError.tooLarge).
 */
export const PARTITIONS_PER_INSERT = 50;

/** The month (yyyymm, UTC) of a DateTime64 value as the consumers write it: ms since the epoch. */
function monthOf(value: unknown): number | string {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) return String(value); // not a time: grouped as it is, the engine decides
  const date = new Date(ms);
  return date.getUTCFullYear() * 100 + date.getUTCMonth() + 1;
}

/**
 * The partition of a row, per partitioned table: the table's `PARTITION BY` (schemas/clickhouse/),
 * computed from the row as inserted. A test compares this list with the tables' `partition_key` in
 * `system.tables`, so a table partitioned in a new migration without an entry here fails it.
 */
export const PARTITION_KEYS: Readonly<Record<string, { expression: string; of(row: Row): unknown }>> = {
  events: { expression: 'toYYYYMM(timestamp)', of: (row) => monthOf(row.timestamp) },
  visits: { expression: 'toYYYYMM(start)', of: (row) => monthOf(row.start) },
};

/**
 * `rows` as the blocks to insert into `table`, one statement each: all of them at once for a table that is
 * not partitioned, else grouped by partition (rows in their order within a partition), at most
 * `partitions` partitions per block.
 */
export function insertBlocks<R extends Row>(
  table: string,
  rows: readonly R[],
  partitions = PARTITIONS_PER_INSERT,
): R[][] {
  const key = PARTITION_KEYS[table];
  if (!key || rows.length === 0) return rows.length === 0 ? [] : [[...rows]];
  const byPartition = new Map<unknown, R[]>();
  for (const row of rows) {
    const partition = key.of(row);
    const list = byPartition.get(partition);
    if (list) list.push(row);
    else byPartition.set(partition, [row]);
  }
  if (byPartition.size <= partitions) return [[...rows]];
  const blocks: R[][] = [];
  let block: R[] = [];
  let inBlock = 0;
  for (const list of byPartition.values()) {
    if (inBlock === partitions) {
      blocks.push(block);
      block = [];
      inBlock = 0;
    }
    block.push(...list);
    inBlock += 1;
  }
  blocks.push(block);
  return blocks;
}
