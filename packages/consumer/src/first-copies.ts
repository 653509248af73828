// A project keeps the first copy of every record id (however long apart its copies arrive, within the
// window record_ids keeps them): the items of a batch whose id the project has stored already, or that an
// earlier item of the batch has, are left out. One lookup per batch (every project's side by side) tells
// both which items are new and when the stored copy of each other one arrived.
import { recordKey, storedArrivals, type Warehouse } from '@tally/warehouse';
import type { Prepared } from './batch-loop.ts';

export interface BatchCopies<Row> {
  /** The items whose record id is new to its project, each id once (the first in log order). */
  fresh: Prepared<Row>[];
  /**
   * The items whose record is stored already and is this very copy delivered again (it arrived when the
   * stored one did: a crash between the consumer's writes): what was written after the record's row must be
   * written again for them.
   */
  redelivered: Prepared<Row>[];
}

export async function batchCopies<Row>(
  warehouse: Warehouse,
  items: readonly Prepared<Row>[],
): Promise<BatchCopies<Row>> {
  const arrivals = await storedArrivals(
    warehouse,
    items.map(({ message }) => ({ project: message.record.project_id, id: message.record.id })),
  );
  const fresh: Prepared<Row>[] = [];
  const redelivered: Prepared<Row>[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const { project_id, id, received_at } = item.message.record;
    const key = recordKey(project_id, id);
    const stored = arrivals.get(key);
    if (stored === undefined) {
      if (!seen.has(key)) fresh.push(item);
    } else if (stored === received_at) redelivered.push(item);
    seen.add(key);
  }
  return { fresh, redelivered };
}

/** The items whose record id is new to its project, each id once (the first in log order). */
export async function firstCopies<Row>(
  warehouse: Warehouse,
  items: readonly Prepared<Row>[],
): Promise<Prepared<Row>[]> {
  return (await batchCopies(warehouse, items)).fresh;
}
