// Rows of a partitioned table are inserted in blocks of at most PARTITIONS_PER_INSERT partitions; a batch
// within the bound, and every table that is not partitioned, is one block as it came. (The conformance
// suite lands such inserts in both engines and checks the partitions against theirs.)
import { expect, it } from 'vitest';
import { insertBlocks, PARTITIONS_PER_INSERT } from './insert-blocks.ts';

const month = (i: number) => Date.UTC(2010, i, 15);

it('groups rows of many months by month, at most PARTITIONS_PER_INSERT months per block', () => {
  const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, timestamp: month(i % 150) }));
  const blocks = insertBlocks('events', rows);
  expect(blocks).toHaveLength(Math.ceil(150 / PARTITIONS_PER_INSERT));
  for (const block of blocks) {
    expect(new Set(block.map((r) => r.timestamp)).size).toBeLessThanOrEqual(PARTITIONS_PER_INSERT);
  }
  expect(
    blocks
      .flat()
      .map((r) => r.id)
      .sort((a, b) => a - b),
  ).toEqual(rows.map((r) => r.id));
  // Rows of one month keep their order.
  expect(blocks[0]?.filter((r) => r.timestamp === month(0)).map((r) => r.id)).toEqual([0, 150]);
  expect(
    insertBlocks(
      'visits',
      rows.map((r) => ({ ...r, start: r.timestamp })),
    ).length,
  ).toBe(blocks.length);
});

it('leaves a batch within the bound, and a table without partitions, as one block in its order', () => {
  const few = Array.from({ length: 10 }, (_, i) => ({ id: i, timestamp: month(9 - i) }));
  expect(insertBlocks('events', few)).toEqual([few]);
  const many = Array.from({ length: 150 }, (_, i) => ({ id: i, timestamp: month(i) }));
  expect(insertBlocks('record_ids', many)).toEqual([many]);
  expect(insertBlocks('events', [])).toEqual([]);
});
