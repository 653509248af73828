// The dashboard, as its own process, keeps the promises of its OpenAPI document
// (schemas/openapi-dashboard.yaml): schemathesis generates valid and invalid requests for every operation
// from the document, with a read key, and checks every answer: no 5xx, only documented statuses, bodies
// and content types (JSON, and CSV where documented), and that operations with security refuse requests
// without credentials. Bounded by examples per operation and a time limit; traffic only to 127.0.0.1.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, spawnTallyService, tempDataDir } from './support/processes.ts';
import { pipelineEnv, type TallyProcess } from './support/tally-process.ts';

const run = promisify(execFile);
const SPEC = `${ROOT}schemas/openapi-dashboard.yaml`;
const RUN_LIMIT_MS = 300_000;
// Semantic refusals (from after to, a filter of an unknown dimension) are valid 400s for schema-valid
// requests, so acceptance of every schema-valid request is not among the checks.
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'ignored_auth',
];

describe('the dashboard against schemas/openapi-dashboard.yaml (schemathesis)', () => {
  let binary: string;
  let key: string;
  let dashboard: TallyProcess;
  const dataDir = tempDataDir();

  beforeAll(async () => {
    const { stdout } = await run('bash', [`${ROOT}infra/schemathesis/install.sh`], { timeout: 600_000 });
    binary = stdout.trim().split('\n').at(-1) as string;
    key = (await new FileTokenStore(dataDir).create('st-project', 'read')).token;
    const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
    dashboard = await spawnTallyService(
      'services/dashboard/src/main.ts',
      { ...inherited, ...pipelineEnv({ TALLY_DATA_DIR: dataDir }) },
      60_000,
    );
  }, 600_000);
  afterAll(async () => {
    await dashboard?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'conforms on valid and invalid requests, with a read key',
    async () => {
      const url = dashboard.endpoints.dashboardUrl as string;
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const cwd = mkdtempSync(join(tmpdir(), 'tally-st-'));
      let output = '';
      let code = 0;
      try {
        const { stdout, stderr } = await run(
          binary,
          [
            'run',
            SPEC,
            '--url',
            url,
            '--header',
            `Authorization: Bearer ${key}`,
            '--checks',
            CHECKS.join(','),
            '--max-examples',
            '25',
            '--request-timeout',
            '20',
            '--generation-database',
            'none',
            '--no-color',
          ],
          { cwd, timeout: RUN_LIMIT_MS, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
        );
        output = stdout + stderr;
      } catch (error) {
        const e = error as { code?: number | string; stdout?: string; stderr?: string; killed?: boolean };
        if (e.killed || typeof e.code !== 'number') throw error;
        code = e.code;
        output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
      if (code !== 0) throw new Error(`schemathesis found failures (exit ${code}):\n${output}`);
      expect(Number(output.match(/(\d+) generated/)?.[1] ?? 0), output).toBeGreaterThan(0);
      expect(dashboard.process.exitCode).toBeNull();
    },
    RUN_LIMIT_MS + 30_000,
  );
});
