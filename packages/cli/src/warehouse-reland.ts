// `tally warehouse reland [--json]`: lands again, from the record log, the records of warehouse parts the
// engine detached as damaged (system.detached_parts; damaged-parts.ts in @tally/warehouse). With Tally
// stopped: it makes record_ids agree with what the tables hold (ids of lost rows out, ids of stored rows
// that record_ids lost back in), marks the damaged parts as re-landed, and moves every consumer group of
// the embedded log back to the first record the log holds. At the next start the consumers are delivered
// the whole log again, and their first-copy rule lands each lost record once and skips everything else.
// Records that retention already deleted from the log cannot be landed again: the command says from which
// offset each topic starts. On Kafka it does the warehouse's part and says how to reset the groups.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { EmbeddedLogLockedError, embeddedLogDir, openEmbeddedLog } from '@tally/log';
import { openWarehouse, prepareReland, type Warehouse, WarehouseLockedError } from '@tally/warehouse';
import { readPublishedEndpoint } from '@tally/warehouse-http';

const STOP_FIRST =
  'stop Tally first (its consumers keep their own positions and would commit over the rewind)';

export async function runReland(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const { dataDir } = config;
  const kafka = config.backends.log.kind === 'kafka';
  if (config.backends.warehouse.kind === 'chdb' && readPublishedEndpoint(dataDir))
    throw new Error(`a Tally process runs on ${dataDir}: ${STOP_FIRST}`);

  // The embedded log as its writer: a running gateway (or npm start) holds that lock, and must be stopped.
  let log: ReturnType<typeof openEmbeddedLog> | null = null;
  if (!kafka) {
    try {
      log = openEmbeddedLog({ path: embeddedLogDir(dataDir), writer: true });
    } catch (error) {
      if (error instanceof EmbeddedLogLockedError) throw new Error(`${error.message}: ${STOP_FIRST}`);
      throw error;
    }
  }
  let warehouse: Warehouse | null = null;
  try {
    try {
      warehouse = await openWarehouse(config);
    } catch (error) {
      if (error instanceof WarehouseLockedError) throw new Error(`${error.message}: ${STOP_FIRST}`);
      throw error;
    }
    const prepared = await prepareReland(warehouse);
    const groups = [...new Set((log?.groups() ?? []).map((g) => g.group))].sort();
    const rewound: Array<{ group: string; topic: string; from: number }> = [];
    for (const group of groups) {
      for (const { topic, from } of (await log?.rewindGroup(group)) ?? [])
        rewound.push({ group, topic, from });
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...prepared, rewound })}\n`);
      return 0;
    }
    const lines = [
      prepared.parts.length === 0
        ? 'No damaged part left to re-land; the log is delivered again all the same.'
        : `Damaged parts re-landed from the log: ${prepared.parts.map((p) => `${p.table} ${p.part} (${p.reason})`).join(', ')}.`,
      `record_ids: ${prepared.removed} id(s) of lost rows taken out, ${prepared.restored} id(s) of stored rows written back.`,
    ];
    if (kafka) {
      lines.push(
        'The record log is Kafka: with the consumers stopped, move their groups to the earliest offsets, e.g.',
        `  kafka-consumer-groups.sh --bootstrap-server <broker> --group analytics --reset-offsets --to-earliest --all-topics --execute`,
        '  (and the same for the group revenue), then start the consumers.',
      );
    } else {
      for (const r of rewound) {
        lines.push(
          `Consumer group ${r.group}, ${r.topic}: delivered again from offset ${r.from}` +
            (r.from > 0 ? ' (retention deleted the records before it: those cannot be landed again)' : ''),
        );
      }
      lines.push('Start Tally: its consumers land the lost records again (the health view shows their lag).');
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await warehouse?.close();
    await log?.close();
  }
}
