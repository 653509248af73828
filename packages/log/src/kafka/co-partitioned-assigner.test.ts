// The co-partitioned assignment: partition p of every topic to one member, whatever the number of members
// and partitions, and every partition to exactly one member.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { coPartitionedPlan } from './co-partitioned-assigner.ts';

it('gives partition p of every topic to the same member, and each partition to exactly one', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 7 }),
      fc.integer({ min: 1, max: 24 }),
      (members, partitions) => {
        const topics = ['tally.pageview', 'tally.event', 'tally.identify'];
        const plan = coPartitionedPlan(
          members,
          new Map(topics.map((t) => [t, Array.from({ length: partitions }, (_, p) => partitions - 1 - p)])),
        );
        const holder = new Map<string, string>();
        for (const [member, assignment] of plan) {
          for (const [topic, list] of Object.entries(assignment)) {
            for (const p of list) {
              expect(holder.has(`${topic}:${p}`)).toBe(false);
              holder.set(`${topic}:${p}`, member);
            }
          }
        }
        expect(holder.size).toBe(topics.length * partitions);
        for (let p = 0; p < partitions; p++) {
          const members = new Set(topics.map((t) => holder.get(`${t}:${p}`)));
          expect(members.size).toBe(1);
        }
      },
    ),
  );
});

it('spreads the partitions evenly: with 6 partitions and 4 members, 2, 2, 1 and 1', () => {
  const plan = coPartitionedPlan(
    ['d', 'c', 'b', 'a'],
    new Map([
      ['x', [0, 1, 2, 3, 4, 5]],
      ['y', [0, 1, 2, 3, 4, 5]],
    ]),
  );
  expect(Object.fromEntries([...plan].map(([m, a]) => [m, a.x]))).toEqual({
    a: [0, 4],
    b: [1, 5],
    c: [2],
    d: [3],
  });
});
