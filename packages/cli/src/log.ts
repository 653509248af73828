// `tally log groups|forget-group`: the embedded record log's consumer groups. Retention deletes a record
// only once every group reading its topic has committed past it, so a group nobody runs any more holds
// retention back until it is forgotten. On Kafka, groups are Kafka's own: use its tools.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { embeddedLogDir, openEmbeddedLog } from '@tally/log';
import { UsageError } from './usage-error.ts';

export async function runLog(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const [action, group] = positionals;
  if (action !== 'groups' && action !== 'forget-group') {
    throw new UsageError('log needs "groups" or "forget-group <group>"');
  }
  if (action === 'forget-group' && !group)
    throw new UsageError('log forget-group needs the name of the group');
  if (config.backends.log.kind === 'kafka') {
    throw new Error(
      'the record log is Kafka (KAFKA_BROKERS): list and delete its consumer groups with kafka-consumer-groups.sh',
    );
  }
  // A reader: it takes no writer lock, so it works beside a running gateway.
  const log = openEmbeddedLog({ path: embeddedLogDir(config.dataDir) });
  try {
    if (action === 'groups') {
      const groups = log.groups();
      if (values.json) {
        process.stdout.write(`${JSON.stringify(groups)}\n`);
      } else {
        for (const g of groups) {
          process.stdout.write(
            `${g.group.padEnd(24)} ${g.topic.padEnd(9)} position ${g.position}  lag ${g.lag}\n`,
          );
        }
        if (groups.length === 0) process.stdout.write('no consumer group has committed yet\n');
      }
      return 0;
    }
    const removed = await log.forgetGroup(group as string);
    if (removed === 0) {
      process.stderr.write(`tally: no consumer group "${group}" in ${embeddedLogDir(config.dataDir)}\n`);
      return 1;
    }
    process.stdout.write(
      `Forgot consumer group ${group} (${removed} topic position${removed === 1 ? '' : 's'}).\n`,
    );
    return 0;
  } finally {
    await log.close();
  }
}
