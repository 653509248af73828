// The consumer groups' backlog on Kafka (RecordLog.backlog): each group's committed offsets against the
// topics' end offsets (kafkajs admin), and when the oldest record a group has not committed reached the
// log. Kafka has no "read the message at offset n" outside a consumer group (a throw-away group costs a
// join, seconds), so that time is found from the broker's time index instead: ListOffsets by timestamp
// answers the first offset whose timestamp is at least t, so the message at the committed offset c has a
// timestamp ≥ t exactly when that answer is ≤ c, and a binary search over t (to the second, about 23
// requests of a few milliseconds) finds it. Message timestamps are the producer's send time: they rise
// with the offset within a partition except across gateways whose clocks differ, where the answer may be
// off by that difference.
import type { RecordType } from '@tally/contract';
import type { Admin } from 'kafkajs';
import { ALL_TOPICS, type GroupBacklog } from '../record-log.ts';
import { topicName } from './topics.ts';

/** How far back the search for the oldest record's time starts: older is told as this old. */
const SEARCH_SPAN_MS = 30 * 24 * 3_600_000;

interface LaggingPartition {
  partition: number;
  committed: number;
}

export async function kafkaBacklog(
  admin: Admin,
  topicPrefix: string,
  now: () => number = Date.now,
  /** Whether to search for the oldest record's time (false: the lag alone, a few requests). */
  withOldest = true,
): Promise<GroupBacklog[]> {
  const topics = ALL_TOPICS.map((type) => ({ type, name: topicName(topicPrefix, type) }));
  const ends = new Map<string, Map<number, { low: number; high: number }>>();
  await Promise.all(
    topics.map(async ({ name }) => {
      const offsets = await admin.fetchTopicOffsets(name);
      ends.set(
        name,
        new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }])),
      );
    }),
  );
  const { groups } = await admin.listGroups();
  const readerPrefix = `${topicPrefix}dead-letter-reader-`;
  const ours = groups
    .map((g) => g.groupId)
    .filter((id) => id.startsWith(topicPrefix) && !id.startsWith(readerPrefix))
    .sort();
  const rows: GroupBacklog[] = [];
  await Promise.all(
    ours.map(async (groupId) => {
      const committed = await admin.fetchOffsets({ groupId, topics: topics.map((t) => t.name) });
      for (const { topic, partitions } of committed) {
        // A topic the group never committed in is not one it reads (the embedded log says the same).
        if (partitions.every((p) => Number(p.offset) < 0)) continue;
        const type = topics.find((t) => t.name === topic)?.type as RecordType;
        const topicEnds = ends.get(topic) ?? new Map();
        let lag = 0;
        const lagging: LaggingPartition[] = [];
        for (const p of partitions) {
          const end = topicEnds.get(p.partition);
          if (!end) continue;
          // No commit in this partition yet: the group starts from the beginning (fromBeginning).
          const position = Math.max(Number(p.offset) < 0 ? end.low : Number(p.offset), end.low);
          if (end.high > position) {
            lag += end.high - position;
            lagging.push({ partition: p.partition, committed: position });
          }
        }
        const oldest =
          lagging.length > 0 && withOldest ? await oldestTimestamp(admin, topic, lagging, now()) : null;
        rows.push({ group: groupId.slice(topicPrefix.length), topic: type, lag, oldest_at: oldest });
      }
    }),
  );
  return rows.sort(
    (a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) || a.topic.localeCompare(b.topic),
  );
}

/** The smallest timestamp among the messages at these partitions' committed offsets, to the second. */
async function oldestTimestamp(
  admin: Admin,
  topic: string,
  lagging: readonly LaggingPartition[],
  now: number,
): Promise<number> {
  // Whether every lagging partition's message at its committed offset has a timestamp ≥ t.
  const allAtLeast = async (t: number): Promise<boolean> => {
    const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, t);
    return lagging.every(({ partition, committed }) => {
      const found = offsets.find((o) => o.partition === partition);
      const offset = found ? Number(found.offset) : -1;
      return offset >= 0 && offset <= committed;
    });
  };
  let low = Math.floor((now - SEARCH_SPAN_MS) / 1000); // seconds; allAtLeast(low) assumed true
  let high = Math.ceil(now / 1000) + 1; // allAtLeast(high) false: nothing is from the future
  if (!(await allAtLeast(low * 1000))) return low * 1000;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (await allAtLeast(middle * 1000)) low = middle;
    else high = middle;
  }
  return low * 1000;
}
