// A full disk under `npm start` (issue 26, finding 9): the data directory on a real tmpfs of its own, filled
// by files until the record log's commits fail, and then to the last byte. Before, lmdb-js's rejected
// commit promises, which nobody holds, ended the whole process (gateway, consumers, dashboard) although no
// acknowledged record was lost. Here, while the disk is full: records are answered 503 with Retry-After
// (never 202 for a record that is not durable), the consumers cannot land (the warehouse cannot write
// either) and wait, the state store's writes fail (refusal counts, every 200 ms), the process stays up,
// and /readyz says why it is not ready. Once the files are removed: /readyz is ready again, records get
// 202 again, and the consumers land everything acknowledged, all without a restart. Needs root (mount);
// the tmpfs is unmounted whatever happens.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reusePortSupported } from '@tally/gateway';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, postIngest } from './support/processes.ts';
import { publishedWarehouse, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const LOOPS = reusePortSupported() ? 2 : 1;
const PROJECT = 'disk-full';
/** Records of about 20 KB: a few dozen fill what is left. */
const event = (i: number) => ({
  type: 'event',
  id: `0190f5e4-5f6a-7000-8000-${String(i).padStart(12, '0')}`,
  data: { session_id: 's', event_name: 'filler', event_data: { n: String(i), pad: 'x'.repeat(20_000) } },
});

let dir = '';
let mounted = false;
let tally: TallyProcess | undefined;
let token = '';
let warehouse: Warehouse | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tally-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `this test mounts a tmpfs of its own and needs root (or CAP_SYS_ADMIN): ${(error as Error).message}`,
    );
  }
  mounted = true;
  token = (await new FileTokenStore(dir).create(PROJECT, 'public')).token;
  tally = await startTallyProcess({
    TALLY_DATA_DIR: dir,
    GATEWAY_WORKERS: String(LOOPS),
    // The state store (refusal counts) writes to the full disk too, every 200 ms.
    REFUSAL_FLUSH_MS: '200',
    // A batch closes 3 s after its first record: the records taken before the disk filled are landed
    // (and committed) while it is full.
    CONSUMER_BATCH_WAIT_MS: '3000',
  });
});

afterAll(async () => {
  await warehouse?.close();
  await tally?.stop();
  if (mounted) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' }); // still busy: detach it now, freed when unused
    }
  }
  if (dir) rmdirSync(dir);
});

const free = () => {
  const { bavail, bsize } = statfsSync(dir);
  return bavail * bsize;
};
const readiness = async () => {
  const res = await fetch(`${tally?.adminUrl}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as { status: string; detail?: string } };
};

it('answers 503 while the disk is full, stays up and unready, and takes records again once there is room', async () => {
  if (!tally) throw new Error('not started');
  const accepted: string[] = [];
  const post = async (i: number) => {
    const res = await postIngest(tally?.url ?? '', event(i), token);
    const body = await res.text();
    if (res.status === 202) accepted.push(event(i).id);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
  };
  expect((await post(0)).status).toBe(202);

  // Fill the file system, leaving about 256 KB, then send records until the log cannot take one.
  writeFileSync(join(dir, 'filler'), Buffer.alloc(Math.max(0, free() - 256 * 1024)));
  const answers: Array<Awaited<ReturnType<typeof post>>> = [];
  for (let i = 1; i <= 60 && !answers.some((a) => a.status === 503); i++) answers.push(await post(i));
  const refused = answers.find((a) => a.status === 503);
  expect(refused, `no 503 in ${answers.length} records`).toBeDefined();
  expect(refused?.retryAfter).toBe('5');
  expect(JSON.parse(refused?.body ?? '')).toEqual({ error: 'Service temporarily unavailable, retry later' });
  expect(answers.every((a) => a.status === 202 || a.status === 503)).toBe(true);

  // Full to the last byte: the warehouse cannot write either.
  writeFileSync(join(dir, 'filler-rest'), Buffer.alloc(free()));
  const failures = async () => {
    const text = await (
      await fetch(`${tally?.adminUrl}/metrics`, { signal: AbortSignal.timeout(5000) })
    ).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith('tally_consumer_failures_total{'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  };
  await eventually(
    30_000,
    'the consumers failing to land while the disk is full',
    async () => (await failures()) > 0,
  );

  // Still up, not ready, and saying why; more records are refused the same way.
  await eventually(10_000, '/readyz saying the disk is full', async () => {
    const { status, body } = await readiness();
    return status === 503 && body.detail === "no space left on the record log's disk";
  });
  for (let i = 100; i < 105; i++) expect((await post(i)).status).toBe(503);
  expect(tally.process.exitCode).toBeNull();

  // Room again: ready, and records accepted, without a restart.
  rmSync(join(dir, 'filler'));
  rmSync(join(dir, 'filler-rest'));
  await eventually(10_000, '/readyz ready again', async () => (await readiness()).status === 200);
  await eventually(10_000, 'a record accepted again', async () => (await post(200)).status === 202);
  for (let i = 201; i < 205; i++) expect((await post(i)).status).toBe(202);
  expect(tally.process.exitCode).toBeNull();

  // Every record acknowledged lands, once: the consumers went on by themselves.
  warehouse = await publishedWarehouse(dir);
  const landed = async () =>
    (
      await (warehouse as Warehouse).query<{ id: string }>(
        'SELECT toString(id) AS id FROM events FINAL WHERE project_id = {p:String}',
        { p: PROJECT },
      )
    ).map((row) => row.id);
  await eventually(
    60_000,
    'every accepted record landing',
    async () => (await landed()).length >= accepted.length,
  );
  expect((await landed()).sort()).toEqual([...new Set(accepted)].sort());
  expect(tally.process.exitCode).toBeNull();
});
