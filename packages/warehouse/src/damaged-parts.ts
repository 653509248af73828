// Records the warehouse lost. When ClickHouse (or chDB) finds a part of a table damaged at start (a data
// file cut short, a checksum that does not match), it moves the part to the table's detached/ directory,
// lists it in system.detached_parts with a reason starting with "broken" (chDB 3.4, engine 26.7, a part
// whose data.bin was cut short: `broken-on-start`), and starts without it: the table simply holds fewer
// rows, and nothing but the engine's own log says so. The records are still in the record log, but their
// ids are still in record_ids, so a redelivery would not land them again. damagedParts() finds such parts
// that have not been re-landed (relanded_parts, migration 009), so that Tally can report them (readiness,
// a log line, the dashboard's health view); prepareReland() makes record_ids agree with what the tables
// hold again, so that a redelivery of the whole log lands every lost record once and nothing twice.
import { RECORD_IDS_KEPT_DAYS } from './record-ids.ts';
import type { Warehouse } from './warehouse.ts';

/** A part of a table the engine detached because it was damaged, not yet re-landed. */
export interface DamagedPart {
  table: string;
  part: string;
  /** The engine's reason: broken-on-start, broken, broken-from-backup. */
  reason: string;
}

/** What Tally reports of lost records: ok, or the parts and what to do. */
export interface WarehouseDamage {
  ok: boolean;
  parts: DamagedPart[];
  /** For readiness and the log: what was lost and what to do. */
  detail?: string;
}

export const RELAND_COMMAND = 'npx tally warehouse reland';

/** The damaged parts of the warehouse's database that the engine detached and no re-land has covered. */
export async function damagedParts(warehouse: Warehouse): Promise<DamagedPart[]> {
  const parts = await warehouse.query<DamagedPart>(
    `SELECT table, name AS part, reason FROM system.detached_parts
     WHERE database = currentDatabase() AND startsWith(reason, 'broken')
     ORDER BY table, name`,
  );
  if (parts.length === 0) return parts;
  const relanded = await warehouse.query<{ table_name: string; part: string }>(
    'SELECT table_name, part FROM relanded_parts FINAL',
  );
  const done = new Set(relanded.map((r) => `${r.table_name}\u0000${r.part}`));
  return parts.filter((p) => !done.has(`${p.table}\u0000${p.part}`));
}

/** damagedParts() as readiness and a log line say it. */
export async function warehouseDamage(warehouse: Warehouse): Promise<WarehouseDamage> {
  const parts = await damagedParts(warehouse);
  if (parts.length === 0) return { ok: true, parts };
  const list = parts.map((p) => `${p.table} ${p.part}`).join(', ');
  return {
    ok: false,
    parts,
    detail:
      `the warehouse lost records: the engine detached ${parts.length} damaged part(s) (${list}); ` +
      `stop Tally and run \`${RELAND_COMMAND}\` to land them again from the record log`,
  };
}

/** The tables whose rows a record id in record_ids stands for, by record type. */
const LANDED_IN = [
  { table: 'events', types: ['pageview', 'event'] },
  { table: 'identities', types: ['identify'] },
  { table: 'revenue', types: ['revenue'] },
] as const;

/** Ids per statement, so that the IN lists stay bounded. */
const CHUNK = 1000;

export interface RelandPreparation {
  /** Damaged parts this re-land covers (now listed in relanded_parts). */
  parts: DamagedPart[];
  /** Ids written back to record_ids because their rows are in the tables (a record_ids part was lost). */
  restored: number;
  /** Ids taken out of record_ids because no table holds their row any more (so the redelivery lands them). */
  removed: number;
}

/**
 * Makes record_ids say exactly which records the tables hold, and marks the damaged parts as re-landed.
 * Then a redelivery of the whole record log, through the consumers' first-copy rule, lands each record
 * whose row was lost, once, and nothing else: a record whose id is in record_ids is skipped, and after
 * this an id is there exactly when its row is.
 *  - An id of a stored row missing from record_ids (a part of record_ids was lost) is written back, with
 *    the row's own arrival time, as the consumer wrote it; otherwise the redelivery would land that record
 *    a second time.
 *  - An id in record_ids whose row is in no table (a part of events, identities or revenue was lost) is
 *    deleted, so the redelivery lands the record again. Revenue: a record whose transaction another record
 *    had already stored has an id in record_ids and no row of its own; its id is deleted too, and the
 *    redelivery, in log order, finds the transaction stored (or re-lands the earlier record first) and
 *    writes the id back without a row, as the first landing did.
 * Derived tables (visits, mrr_movements) are rebuilt by the redelivery itself: the consumers refresh the
 * visits and MRR movements of every record they are delivered, stored or not.
 */
/**
 * The stored rows whose id record_ids lacks: written back. Only those that arrived within the time record_ids
 * keeps an id (RECORD_IDS_KEPT_DAYS): older ids left the table by its TTL, not with a damaged part.
 */
const WRITE_BACK = `isNotNull(toUUIDOrNull(id)) AND received_at > now() - INTERVAL ${RECORD_IDS_KEPT_DAYS} DAY
  AND (project_id, toUUID(id)) NOT IN (SELECT project_id, id FROM record_ids)`;

export async function prepareReland(warehouse: Warehouse): Promise<RelandPreparation> {
  const parts = await damagedParts(warehouse);
  let restored = 0;
  let removed = 0;
  for (const { table, types } of LANDED_IN) {
    const typeOf = table === 'events' ? 'type' : `'${types[0]}'`;
    const [back] = await warehouse.query<{ n: number }>(
      `SELECT count() AS n FROM (SELECT DISTINCT project_id, toUUID(id) AS uid FROM ${table}
       WHERE ${WRITE_BACK})`,
    );
    if (back && back.n > 0) {
      await warehouse.command(
        `INSERT INTO record_ids (project_id, id, type, received_at)
         SELECT project_id, toUUID(id), any(${typeOf}), min(received_at) FROM ${table}
         WHERE ${WRITE_BACK}
         GROUP BY project_id, id`,
      );
      restored += back.n;
    }
    const orphans = await warehouse.query<{ project_id: string; id: string }>(
      `SELECT DISTINCT project_id, toString(id) AS id FROM record_ids
       WHERE type IN {types:Array(String)}
         AND (project_id, toString(id)) NOT IN (SELECT project_id, id FROM ${table})`,
      { types: [...types] },
    );
    const byProject = new Map<string, string[]>();
    for (const { project_id, id } of orphans) {
      const ids = byProject.get(project_id) ?? [];
      ids.push(id);
      byProject.set(project_id, ids);
    }
    for (const [project, ids] of byProject) {
      for (let i = 0; i < ids.length; i += CHUNK) {
        await warehouse.command(
          'DELETE FROM record_ids WHERE project_id = {project:String} AND toString(id) IN {ids:Array(String)}',
          { project, ids: ids.slice(i, i + CHUNK) },
        );
      }
    }
    removed += orphans.length;
  }
  if (parts.length > 0) {
    await warehouse.insert(
      'relanded_parts',
      parts.map((p) => ({ table_name: p.table, part: p.part, reason: p.reason, relanded_at: Date.now() })),
    );
  }
  return { parts, restored, removed };
}
