// `tally annotations add|list|remove`: a project's dated notes (a deploy, a campaign), drawn on the
// dashboard's time charts, in the store the configuration names (Redis when REDIS_URL is set, else
// TALLY_DATA_DIR/dashboard.mdb), beside a running dashboard or not: a deploy script adds one with
// `tally annotations add --project shop --date 2026-03-01 "v2 deployed"`. A project no token was ever made
// for is refused (a typo annotates nothing).
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { isAnnotationDate, openStateStore, ProjectStore } from '@tally/state-store';
import { assertProjectId, connectRedis } from '@tally/tokens';
import { checkArgument, UsageError } from './usage-error.ts';
import { checkProjectsExist } from './users.ts';

export async function runAnnotations(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      date: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, ...args] = positionals;
  // The arguments first: a mistake opens no store.
  if (!['add', 'list', 'remove'].includes(action ?? '')) {
    throw new UsageError(`unknown annotations action "${action ?? ''}" (add, list or remove)`);
  }
  const project = values.project;
  if (!project) throw new UsageError(`annotations ${action} needs --project <id>`);
  checkArgument(() => assertProjectId(project));
  const text = args.join(' ').trim();
  if (action === 'add') {
    const date = values.date;
    if (!date || !isAnnotationDate(date)) {
      throw new UsageError(
        'annotations add needs --date YYYY-MM-DD (or an ISO timestamp with its zone, 2026-03-01T10:00:00Z)',
      );
    }
    if (!text)
      throw new UsageError(
        'annotations add needs the text: tally annotations add --project P --date D "text"',
      );
    if (text.length > 500) throw new UsageError('an annotation is at most 500 characters');
  }
  if (action === 'remove' && args.length !== 1) throw new UsageError('annotations remove needs one id');
  await checkProjectsExist(config, [project]);
  const redis = connectRedis(config);
  const store = openStateStore(config, redis);
  const projects = new ProjectStore(store);
  try {
    switch (action) {
      case 'add': {
        const note = await projects.addAnnotation(project, {
          date: values.date as string,
          text,
          created_by: 'cli',
        });
        if (values.json) process.stdout.write(`${JSON.stringify(note)}\n`);
        else process.stdout.write(`Added annotation ${note.id} on ${note.date}: ${note.text}\n`);
        return 0;
      }
      case 'list': {
        const notes = await projects.annotations(project);
        if (values.json) process.stdout.write(`${JSON.stringify(notes)}\n`);
        else if (notes.length === 0) process.stdout.write(`No annotations on ${project}\n`);
        else
          for (const n of notes) process.stdout.write(`${n.id}  ${n.date}  ${n.text}  (${n.created_by})\n`);
        return 0;
      }
      default: {
        const id = args[0] as string;
        if (!(await projects.deleteAnnotation(project, id))) {
          process.stderr.write(`No annotation ${id} on ${project}\n`);
          return 1;
        }
        process.stdout.write(`Removed annotation ${id}\n`);
        return 0;
      }
    }
  } finally {
    await store.close();
    redis?.disconnect();
  }
}
