// What a gateway thread loads: each thread is its own V8 isolate with its own copy of every module it
// imports, so a client the configuration does not use must not be loaded (issue 15's memory per loop).
// The thread here is the real gateway-worker, started as gateway-threads.ts starts it, on the embedded log
// and the data directory: it must not have loaded the Kafka client, the schema registry's, or Redis's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import type { GatewayWorkerData } from './gateway-threads.ts';
import { localConfig } from './testing.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('a gateway thread without Kafka or Redis configured loads neither client', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-modules-'));
  dirs.push(dir);
  const config = localConfig(dir, {
    REDIS_URL: '',
    KAFKA_BROKERS: '',
    SCHEMA_REGISTRY_URL: '',
  });
  const workerData: GatewayWorkerData = {
    config,
    worker: '0',
    reusePort: false,
    loops: 1,
    appendPort: null,
    releasePort: null,
    shared: null,
    checkLogSettings: true,
  };
  const worker = new Worker(new URL('./fixtures/loaded-modules-worker.mjs', import.meta.url), {
    workerData,
    execArgv: [...process.execArgv, '--conditions=@tally/source'],
  });
  try {
    const messages: Array<{ type: string; url?: string; files?: string[] }> = [];
    const modules = await new Promise<string[]>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('exit', (code) => reject(new Error(`the thread exited (code ${code})`)));
      worker.on('message', (message: { type: string; url?: string; files?: string[]; message?: string }) => {
        messages.push(message);
        if (message.type === 'failed') reject(new Error(message.message));
        if (message.type === 'modules') resolve(message.files ?? []);
      });
    });
    const url = messages.find((m) => m.type === 'listening')?.url;
    expect(url).toBeTruthy();
    // It serves (a request's path loads nothing more of either client).
    const res = await fetch(`${url}/api/ingest`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(401);
    const packages = new Set(modules.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]));
    // The detection works: the gateway's own CommonJS dependencies are there.
    expect(packages).toContain('fastify');
    for (const unused of ['kafkajs', '@kafkajs/confluent-schema-registry', 'kafkajs-snappy', 'ioredis']) {
      expect(packages, unused).not.toContain(unused);
    }
  } finally {
    await worker.terminate();
  }
});
