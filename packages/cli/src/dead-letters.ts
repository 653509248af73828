// `tally dead-letters list | show <id> | replay <id>… | replay --all | discard <id>… | discard --all`:
// the records the consumers set aside because they could not land them (the warehouse refused their
// values, they break the contract, they could not be decoded). Works on the record log the configuration
// names (the embedded log, beside a running `npm start`, or Kafka). A replay puts the records back on
// their topics, so that their consumer lands them again (after the warehouse or the code was mended);
// with the embedded log beside a running gateway, the gateway carries the replay out within a second.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { type DeadLetter, openRecordLog } from '@tally/log';
import { UsageError } from './usage-error.ts';

const ACTIONS = 'list, show <id>, replay <id>… | --all, discard <id>… | --all';

export async function runDeadLetters(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false } },
  });
  const [action, ...ids] = positionals;
  if (!action || !['list', 'show', 'replay', 'discard'].includes(action)) {
    throw new UsageError(`dead-letters needs one of: ${ACTIONS}`);
  }
  if ((action === 'replay' || action === 'discard') && !values.all && ids.length === 0) {
    throw new UsageError(`dead-letters ${action} needs the ids of the letters, or --all`);
  }
  if (action === 'show' && ids.length !== 1) throw new UsageError('dead-letters show needs one id');
  // A reader of the embedded log: no writer lock, so this works beside a running gateway.
  const log = await openRecordLog(config);
  try {
    const store = log.deadLetters;
    if (action === 'list') {
      const letters = await store.list();
      if (values.json) process.stdout.write(`${JSON.stringify(letters.map(summary))}\n`);
      else process.stdout.write(letters.length ? letters.map(line).join('') : 'no dead letters\n');
      return 0;
    }
    if (action === 'show') {
      const letter = await store.get(ids[0] as string);
      if (!letter) {
        process.stderr.write(`tally: no dead letter ${ids[0]}\n`);
        return 1;
      }
      process.stdout.write(`${JSON.stringify(shown(letter), null, values.json ? 0 : 2)}\n`);
      return 0;
    }
    const targets = values.all ? (await store.list()).map((l) => l.id) : ids;
    if (action === 'discard') {
      const discarded = await store.discard(targets);
      process.stdout.write(`Discarded ${discarded} dead letter${discarded === 1 ? '' : 's'}.\n`);
      return discarded === targets.length ? 0 : 1;
    }
    const result = await store.replay(targets);
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      if (result.replayed.length) process.stdout.write(`Replayed ${result.replayed.join(', ')}\n`);
      if (result.requested.length) {
        process.stdout.write(
          `Asked the running gateway to replay ${result.requested.join(', ')} (within a second)\n`,
        );
      }
      for (const { id, reason } of result.refused)
        process.stderr.write(`tally: not replayed ${id}: ${reason}\n`);
      if (targets.length === 0) process.stdout.write('no dead letters\n');
    }
    return result.refused.length === 0 ? 0 : 1;
  } finally {
    await log.close();
  }
}

/** A letter without its record, for lists. */
function summary(letter: DeadLetter) {
  const { record: _r, raw: _raw, ...rest } = letter;
  return { ...rest, project_id: letter.record?.project_id ?? null };
}

function line(letter: DeadLetter): string {
  const when = new Date(letter.failed_at).toISOString();
  const project = letter.record?.project_id ?? '(undecodable)';
  const reason = letter.error.split('\n')[0]?.slice(0, 120) ?? '';
  return `${letter.id}  ${when}  ${project}  ${letter.error_code}  ${reason}\n`;
}

/** A letter as `show` prints it: the record in full, raw bytes (if any) in base64. */
function shown(letter: DeadLetter) {
  const { raw, ...rest } = letter;
  return raw ? { ...rest, raw_base64: Buffer.from(raw).toString('base64') } : rest;
}
