// Builds a gateway for tests: a real embedded log and a real file token store in a temporary directory,
// with one public and one secret token, and any config override.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type TallyConfig } from '@tally/config';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import type { FastifyInstance } from 'fastify';
import { buildGateway, type GatewayDeps } from './gateway.ts';
import { GatewayMetrics } from './metrics.ts';
import { FileSaltStore, VisitorIds } from './visitor-id.ts';

export interface TestGateway {
  app: FastifyInstance;
  log: RecordLog;
  config: TallyConfig;
  metrics: GatewayMetrics;
  dataDir: string;
  publicToken: string;
  secretToken: string;
  close(): Promise<void>;
}

export async function testGateway(
  env: Record<string, string> = {},
  options: { openLog?: (dataDir: string) => RecordLog } & Partial<GatewayDeps> = {},
): Promise<TestGateway> {
  const { openLog, ...deps } = options;
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-gw-'));
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, ...env });
  const store = new FileTokenStore(dataDir);
  const publicToken = (await store.create('test-project', 'public')).token;
  const secretToken = (await store.create('test-project', 'secret')).token;
  const tokens = new TokenVerifier(store, { refreshMs: 100_000 });
  await tokens.refresh();
  const log = openLog?.(dataDir) ?? openEmbeddedLog({ path: join(dataDir, 'log') });
  const metrics = new GatewayMetrics();
  const app = await buildGateway({
    config,
    log,
    tokens,
    visitorIds: new VisitorIds(new FileSaltStore(dataDir)),
    metrics,
    ...deps,
  });
  await app.ready();
  return {
    app,
    log,
    config,
    metrics,
    dataDir,
    publicToken,
    secretToken,
    async close() {
      await app.close();
      await log.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
