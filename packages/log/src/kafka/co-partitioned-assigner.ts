// The assignment of a group's partitions to its members that keeps a key's records in every topic with one
// member: partition p of every topic goes to the same member (members sorted by id, partition p to member
// p mod n). A visitor's pageviews and custom events are in two topics, under one key, so in the same
// partition number of each (the topics have the same number of partitions: topics.ts creates them so, and
// the start-up check warns when they differ); kafkajs's round-robin assignment spreads the partitions of all
// topics over the members in one sequence, which gives partition p of two topics to two members as soon as
// the number of partitions is not a multiple of the number of members. The visits of a visitor are folded
// from all its records together, by the member that holds them (see the analytics consumer).
import kafkajs, { type PartitionAssigner } from 'kafkajs';

const { AssignerProtocol } = kafkajs;

export const CO_PARTITIONED = 'TallyCoPartitioned';

/** Partition p of every topic → sorted member p mod n: the plan, as a pure function (tested alone). */
export function coPartitionedPlan(
  memberIds: readonly string[],
  partitionsOf: ReadonlyMap<string, readonly number[]>,
): Map<string, Record<string, number[]>> {
  const members = [...memberIds].sort();
  const plan = new Map<string, Record<string, number[]>>(members.map((id) => [id, {}]));
  if (members.length === 0) return plan;
  for (const [topic, partitions] of partitionsOf) {
    for (const partition of [...partitions].sort((a, b) => a - b)) {
      const assigned = plan.get(members[partition % members.length] as string) as Record<string, number[]>;
      const list = assigned[topic];
      if (list) list.push(partition);
      else assigned[topic] = [partition];
    }
  }
  return plan;
}

export const coPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: CO_PARTITIONED,
  version: 0,
  async assign({ members, topics }) {
    const partitionsOf = new Map(
      topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId)]),
    );
    const plan = coPartitionedPlan(
      members.map((m) => m.memberId),
      partitionsOf,
    );
    return [...plan].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment,
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: CO_PARTITIONED,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    };
  },
});
