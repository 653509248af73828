// Production runs the compiled JavaScript: `npm run build` gives dist/ files that plain Node runs (no tsx, no
// export condition, so every workspace package resolves to its dist/). The gateway as the image runs it
// answers a pageview with 202, also on Kafka (the Avro schemas are found from dist/), and `npm start`'s
// process (its gateway thread from dist/, the warehouse migrations found from dist/) lands it in the warehouse.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { topicName } from '@tally/log';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readTopic } from './support/kafka.ts';
import {
  eventually,
  type GatewayProcess,
  ROOT,
  startGatewayProcess,
  tempDataDir,
} from './support/processes.ts';
import { openRecordReader } from './support/record-log.ts';
import { publishedWarehouse, send, startTallyProcess } from './support/tally-process.ts';

const GATEWAY = 'services/gateway/dist/main.js';
const TALLY = 'services/embedded/dist/main.js';
const running: GatewayProcess[] = [];

async function tokenIn(dataDir: string, project: string): Promise<string> {
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create(project, 'public');
  await store.close();
  return token;
}

const pageview = (id: string) => ({
  type: 'pageview',
  id,
  data: { session_id: 's_compiled', visitor_fingerprint: 'fp_compiled', url: 'https://shop.example/' },
});

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, timeout: 120_000 });
  // npm run build's next step: the tracker's bundles, which the compiled gateway serves.
  await promisify(execFile)(process.execPath, ['packages/core/scripts/tracker-bundles.mjs', '--if-stale'], {
    cwd: ROOT,
    timeout: 60_000,
  });
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
});

describe('npm run build', () => {
  it('compiles every package and service, each export to a dist/ file that exists', () => {
    for (const dir of ['packages', 'services']) {
      for (const name of readdirNames(join(ROOT, dir))) {
        const pkg = JSON.parse(readFileSync(join(ROOT, dir, name, 'package.json'), 'utf8')) as {
          exports?: Record<string, { default?: string; import?: { default?: string } }>;
          bin?: Record<string, string>;
        };
        // `import` where the published packages have a CommonJS copy under `require` (build-packages.mjs).
        const targets = Object.values(pkg.exports ?? {}).flatMap((e) => {
          const target = e.default ?? e.import?.default;
          return target ? [target] : [];
        });
        if (!pkg.exports) targets.push('./dist/main.js'); // the CLI: a bin, no exports
        expect(targets.length, `${dir}/${name}`).toBeGreaterThan(0);
        for (const target of targets)
          expect(existsSync(join(ROOT, dir, name, target)), `${dir}/${name} ${target}`).toBe(true);
      }
    }
  });

  it('runs the gateway as the image does: a pageview is answered 202 and is in the log', async () => {
    const dataDir = tempDataDir();
    const token = await tokenIn(dataDir, 'compiled');
    const gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir }, GATEWAY);
    running.push(gateway);
    const id = randomUUID();
    expect((await send(gateway.url, token, pageview(id))).status).toBe(202);
    // The compiled gateway finds the tracker's bundles (packages/core/dist/tracker) from its own dist/.
    const script = await fetch(`${gateway.url}/tally.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toMatch(/^"use strict";/);
    expect(await gateway.stop()).toBe(0);
    const log = openRecordReader(dataDir);
    try {
      expect((await log.all()).map((r) => [r.id, r.project_id])).toEqual([[id, 'compiled']]);
    } finally {
      await log.close();
    }
  });

  it('runs the gateway on Kafka: the Avro schemas are read from schemas/ as from the sources', async () => {
    const dataDir = tempDataDir();
    const token = await tokenIn(dataDir, 'compiled-kafka');
    const prefix = `test-compiled-${randomUUID().slice(0, 8)}.`;
    const brokers = inject('kafkaBrokers');
    const registry = inject('schemaRegistryUrl');
    const gateway = await startGatewayProcess(
      {
        TALLY_DATA_DIR: dataDir,
        KAFKA_BROKERS: brokers,
        SCHEMA_REGISTRY_URL: registry,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_PARTITIONS: '1',
      },
      GATEWAY,
    );
    running.push(gateway);
    const id = randomUUID();
    expect((await send(gateway.url, token, pageview(id))).status).toBe(202);
    const [message] = await readTopic(brokers, registry, topicName(prefix, 'pageview'), (m) => m.length >= 1);
    expect(message?.decoded).toMatchObject({ id, project_id: 'compiled-kafka' });
    expect(await gateway.stop()).toBe(0);
  });

  it("runs npm start's process: the gateway thread answers 202 and the record lands in the warehouse", async () => {
    const dataDir = tempDataDir();
    const token = await tokenIn(dataDir, 'compiled-all');
    const tally = await startTallyProcess({ TALLY_DATA_DIR: dataDir }, TALLY);
    running.push(tally);
    const id = randomUUID();
    expect((await send(tally.url, token, pageview(id))).status).toBe(202);
    const warehouse = await publishedWarehouse(dataDir);
    try {
      await eventually(20_000, 'the pageview in the warehouse', async () => {
        const rows = await warehouse.query<{ n: number }>(
          'SELECT count() AS n FROM events FINAL WHERE project_id = {p:String} AND id = {id:String}',
          { p: 'compiled-all', id },
        );
        return Number(rows[0]?.n) === 1;
      });
    } finally {
      await warehouse.close();
    }
    expect(await tally.stop()).toBe(0);
  });
});

function readdirNames(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}
