// A project keeps the first copy of every record id (however long apart its copies arrive): the items of
// a batch whose id the project has stored already, or that an earlier item of the batch has, are left out.
import { storedRecordIds, type Warehouse } from '@tally/warehouse';
import type { Prepared } from './batch-loop.ts';

/** The items whose record id is new to its project, each id once (the first in log order). */
export async function firstCopies<Row>(
  warehouse: Warehouse,
  items: readonly Prepared<Row>[],
): Promise<Prepared<Row>[]> {
  const byProject = new Map<string, Map<string, Prepared<Row>>>();
  for (const item of items) {
    const { project_id, id } = item.message.record;
    const ids = byProject.get(project_id) ?? new Map<string, Prepared<Row>>();
    byProject.set(project_id, ids);
    if (!ids.has(id)) ids.set(id, item);
  }
  const fresh: Prepared<Row>[] = [];
  for (const [project, ids] of byProject) {
    const stored = await storedRecordIds(warehouse, project, [...ids.keys()]);
    for (const [id, item] of ids) if (!stored.has(id)) fresh.push(item);
  }
  return fresh;
}
