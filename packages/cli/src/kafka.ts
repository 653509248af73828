// `tally kafka compatibility [--set LEVEL] [--type TYPE] [--json]`: the compatibility level of the Kafka
// record log's subjects in the schema registry (`<prefix><type>-value`, and the dead letters'). Tally sets
// SCHEMA_COMPATIBILITY only on a subject that has no level yet; once it has one, the level is the
// operator's, changed here (or with the registry's own API) and kept across restarts. Talks to the schema
// registry only, not the brokers.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import {
  COMPATIBILITY_LEVELS,
  isCompatibility,
  logSubjects,
  setSubjectCompatibility,
  subjectCompatibility,
} from '@tally/log';
import { UsageError } from './usage-error.ts';

const USAGE = 'kafka needs "compatibility [--set LEVEL] [--type TYPE] [--json]"';

export async function runKafka(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      set: { type: 'string' },
      type: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] !== 'compatibility' || positionals.length > 1) throw new UsageError(USAGE);
  const level = values.set?.toUpperCase();
  if (values.set !== undefined && !isCompatibility(level)) {
    throw new UsageError(`--set takes one of ${COMPATIBILITY_LEVELS.join(', ')}`);
  }
  const all = logSubjects(config.KAFKA_TOPIC_PREFIX);
  const subjects = values.type
    ? all.filter((s) => s === `${config.KAFKA_TOPIC_PREFIX}${values.type}-value`)
    : all;
  if (subjects.length === 0) {
    throw new UsageError(
      `--type takes one of ${all.map((s) => s.slice(config.KAFKA_TOPIC_PREFIX.length, -'-value'.length)).join(', ')}`,
    );
  }
  const backend = config.backends.log;
  if (backend.kind !== 'kafka') {
    throw new Error(
      'the record log is not Kafka (KAFKA_BROKERS and SCHEMA_REGISTRY_URL): only the Kafka record log registers schemas',
    );
  }
  const registryUrl = backend.schemaRegistryUrl;
  if (level !== undefined && isCompatibility(level)) {
    for (const subject of subjects) await setSubjectCompatibility(registryUrl, subject, level);
  }
  const levels = await Promise.all(
    subjects.map(async (subject) => ({
      subject,
      compatibility: await subjectCompatibility(registryUrl, subject),
    })),
  );
  if (values.json) {
    process.stdout.write(`${JSON.stringify(levels)}\n`);
    return 0;
  }
  const width = Math.max(...levels.map((l) => l.subject.length));
  for (const { subject, compatibility } of levels) {
    process.stdout.write(
      `${subject.padEnd(width)}  ${compatibility ?? '(none: the next start of Tally sets SCHEMA_COMPATIBILITY)'}\n`,
    );
  }
  if (level !== undefined) process.stdout.write(`Set ${level} on ${subjects.length} subject(s).\n`);
  return 0;
}
