// The running gateway keeps the promises of its OpenAPI document (schemas/openapi.yaml): schemathesis
// (installed by infra/schemathesis/install.sh, which this test runs when needed) generates valid and
// invalid requests from the document and checks every answer against it: no 5xx, only documented
// statuses, bodies and content types, documented headers (Retry-After), schema-valid data accepted,
// invalid data and requests without a token refused. Bounded by a number of examples per operation and a
// time limit; traffic only to the gateway on 127.0.0.1. Fails with schemathesis's own report.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, ROOT, startGatewayProcess, tempDataDir } from './support/processes.ts';

const run = promisify(execFile);
const SPEC = `${ROOT}schemas/openapi.yaml`;
const RUN_LIMIT_MS = 240_000;

// Every response check that applies to a stateless endpoint (other methods on /api/ingest: 405 with Allow).
const CHECKS = [
  'unsupported_method',
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'positive_data_acceptance',
  'missing_required_header',
  'ignored_auth',
];

/** The `st` executable, installing schemathesis into its virtualenv first when it is missing. */
async function schemathesis(): Promise<string> {
  try {
    // Idempotent and quick when the pinned version is installed; installs it from PyPI otherwise.
    const { stdout } = await run('bash', [`${ROOT}infra/schemathesis/install.sh`], { timeout: 600_000 });
    return stdout.trim().split('\n').at(-1) as string;
  } catch (error) {
    throw new Error(
      `infra/schemathesis/install.sh failed (${(error as Error).message}). It needs python3 with venv ` +
        '(Debian: python3-venv) and PyPI; run it yourself to see why.',
    );
  }
}

interface Report {
  code: number;
  output: string;
}

/** Runs `st run` against the gateway; never throws on failures found, returns the exit code and the report. */
async function st(binary: string, url: string, token: string, args: string[]): Promise<Report> {
  expect(new URL(url).hostname).toBe('127.0.0.1');
  const cwd = mkdtempSync(join(tmpdir(), 'tally-st-'));
  try {
    const { stdout, stderr } = await run(
      binary,
      [
        'run',
        SPEC,
        '--url',
        url,
        '--header',
        `X-API-Token: ${token}`,
        '--request-timeout',
        '10',
        '--generation-database',
        'none',
        '--no-color',
        ...args,
      ],
      {
        cwd,
        timeout: RUN_LIMIT_MS,
        maxBuffer: 64 * 1024 * 1024,
        // test/support/schemathesis_hooks.py: money the contract admits in schema-valid cases.
        env: {
          ...process.env,
          NO_COLOR: '1',
          SCHEMATHESIS_HOOKS: 'schemathesis_hooks',
          PYTHONPATH: `${ROOT}test/support`,
        },
      },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string; killed?: boolean };
    if (e.killed) throw new Error(`schemathesis did not finish within ${RUN_LIMIT_MS} ms:\n${e.stdout}`);
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Fails with schemathesis's report unless it ran test cases and found nothing (warnings are fine). */
function expectNoIssues(report: Report) {
  if (report.code !== 0)
    throw new Error(`schemathesis found failures (exit ${report.code}):\n${report.output}`);
  const generated = Number(report.output.match(/(\d+) generated/)?.[1] ?? 0);
  expect(generated, report.output).toBeGreaterThan(0);
}

describe('the running gateway against schemas/openapi.yaml (schemathesis)', () => {
  let binary: string;
  let token: string;
  const gateways: GatewayProcess[] = [];
  const dataDirs = [tempDataDir(), tempDataDir()];

  beforeAll(async () => {
    binary = await schemathesis();
    // A secret token, so that every record type (revenue too) can be accepted.
    token = (await new FileTokenStore(dataDirs[0] as string).create('schemathesis', 'secret')).token;
  }, 600_000);
  afterAll(async () => {
    for (const gateway of gateways) await gateway.stop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'conforms on valid and invalid requests',
    async () => {
      const gateway = await startGatewayProcess({
        TALLY_DATA_DIR: dataDirs[0] as string,
        RATE_LIMIT_PER_HOUR: '1000000',
      });
      gateways.push(gateway);
      expectNoIssues(
        await st(binary, gateway.url, token, ['--checks', CHECKS.join(','), '--max-examples', '150']),
      );
      expect(gateway.process.exitCode).toBeNull();
    },
    RUN_LIMIT_MS + 30_000,
  );

  it(
    'conforms when rate limited: 429 with its body and Retry-After',
    async () => {
      // A limit of one request an hour: nearly every answer is a 429, checked against the document. The
      // checks that expect the request itself to decide (401, 400, 202) do not apply behind a 429.
      const gateway = await startGatewayProcess({
        TALLY_DATA_DIR: dataDirs[1] as string,
        RATE_LIMIT_PER_HOUR: '1',
      });
      gateways.push(gateway);
      const checks = CHECKS.filter((c) => c.endsWith('_conformance') || c === 'not_a_server_error');
      const report = await st(binary, gateway.url, token, [
        '--checks',
        checks.join(','),
        '--max-examples',
        '20',
      ]);
      expectNoIssues(report);
      expect(report.output).toMatch(/429/);
    },
    RUN_LIMIT_MS + 30_000,
  );
});
