// CPU per request of the gateway alone (issue 15's per-request cost): one gateway process from the
// sources (tsx), GATEWAY_WORKERS event loops, the embedded log, pageviews from 500 templates (250 client
// IPs in X-Forwarded-For behind TRUST_PROXY=127.0.0.1, 30 User-Agents, no visitor_fingerprint, so that
// every request derives a visitor id), `--connections` keep-alive connections (autocannon, closed loop).
// The figure is the process's own CPU time (user + system, /proc/<pid>/stat) over the measured seconds,
// divided by the answers: less sensitive to a shared machine than req/s. Also: req/s, p99, statuses, peak
// RSS (VmHWM), RssAnon and RssFile at the end of the load, and the load average. `--entry` names another tree's main.ts, to compare two trees with
// the same command (alternate them: A B A B …). `--cpu-prof <dir>` writes the main thread's V8 profile
// (read it with bench/profile.ts). Prints one JSON object.
//
//   node --conditions=@tally/source --import tsx bench/gateway-cpu.ts [--workers 1] [--duration 10]
//     [--warmup 3] [--connections 256] [--entry services/gateway/src/main.ts] [--cpu-prof <dir>]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import autocannon from 'autocannon';
import { parseArgs } from './lib/report.ts';

const options = parseArgs(
  {
    workers: 1,
    duration: 10,
    warmup: 3,
    connections: 256,
    entry: 'services/gateway/src/main.ts',
    cpuProf: '',
  },
  process.argv.slice(2),
);

const dataDir = mkdtempSync(join(tmpdir(), 'tally-gateway-cpu-'));
const token = (await new FileTokenStore(dataDir).create('bench-cpu', 'public')).token;
const readyFile = join(dataDir, 'ready.json');
const gateway = spawn(
  process.execPath,
  [
    ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProf}`] : []),
    '--conditions=@tally/source',
    '--import',
    'tsx',
    options.entry,
  ],
  {
    env: {
      ...process.env,
      TALLY_DATA_DIR: dataDir,
      PORT: '0',
      ADMIN_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEWAY_WORKERS: String(options.workers),
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_PER_HOUR: '100000000',
      TALLY_READY_FILE: readyFile,
      REDIS_URL: '',
      KAFKA_BROKERS: '',
      SCHEMA_REGISTRY_URL: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
const pid = gateway.pid as number;
try {
  const deadline = Date.now() + 60_000;
  while (!existsSync(readyFile)) {
    if (Date.now() > deadline || gateway.exitCode !== null) throw new Error('the gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = (JSON.parse(readFileSync(readyFile, 'utf8')) as { endpoints: { url: string } }).endpoints.url;
  const cpuSeconds = () => {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  };
  const requests = Array.from({ length: 500 }, (_, i) => ({
    method: 'POST' as const,
    path: '/api/ingest',
    headers: {
      'content-type': 'application/json',
      'x-api-token': token,
      'x-forwarded-for': `10.1.${i % 250}.${(i * 7) % 250}`,
      'user-agent': `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/${100 + (i % 30)}.0 Safari/537.36`,
    },
    body: JSON.stringify({
      type: 'pageview',
      data: {
        session_id: `s${i}`,
        url: `https://shop.example/p/${i}?utm_source=news&utm_medium=email`,
        referrer: 'https://www.google.com/',
        title: `Product ${i} - Shop`,
        screen_width: 1920,
        language: 'en-GB',
      },
    }),
  }));
  const load = (seconds: number) =>
    new Promise<autocannon.Result>((resolve, reject) =>
      autocannon({ url, connections: options.connections, duration: seconds, requests }, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  await load(options.warmup);
  const before = cpuSeconds();
  const result = await load(options.duration);
  const cpu = cpuSeconds() - before;
  const statuses: Record<string, number> = {};
  let answered = 0;
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    const count = stat.count ?? 0;
    statuses[code] = count;
    answered += count;
  }
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) =>
    Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024);
  console.log(
    JSON.stringify({
      entry: options.entry,
      workers: options.workers,
      rps: result.requests.average,
      p99Ms: result.latency.p99,
      statuses,
      cpuUsPerRequest: Math.round((cpu * 1e6) / answered),
      vmHwmMiB: mib('VmHWM'),
      // At the end of the load: the process's own memory, and the pages of files (the LMDB map, code).
      rssAnonMiB: mib('RssAnon'),
      rssFileMiB: mib('RssFile'),
      loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    }),
  );
} finally {
  gateway.kill('SIGTERM');
  await new Promise((resolve) => gateway.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
