// What the ClickHouse backend sends on a cluster (CLICKHOUSE_CLUSTER), as the real @clickhouse/client sends
// it over HTTP to a server here that records each request (no ClickHouse cluster runs here): the database
// created ON CLUSTER, and on every request the settings that make an INSERT through a Distributed table
// return only once the shards (and a majority of each shard's replicas) hold the rows. On one server, none.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLUSTER_SETTINGS, openClickHouseWarehouse } from './clickhouse-warehouse.ts';

interface Recorded {
  params: URLSearchParams;
  body: string;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server that answers every request as ClickHouse answers a statement with no rows, and records it. */
async function recordingServer(): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    requests.push({
      params: new URL(request.url ?? '/', 'http://x').searchParams,
      body: Buffer.concat(chunks).toString(),
    });
    response.writeHead(200, { 'Content-Type': 'text/plain', 'X-ClickHouse-Summary': '{}' });
    response.end();
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server?.address() as AddressInfo).port}`, requests };
}

/** The statement of a request: in the `query` parameter (inserts) or the body. */
const statementOf = (r: Recorded) => r.params.get('query') ?? r.body;

describe('openClickHouseWarehouse on a cluster', () => {
  it('creates the database ON CLUSTER and sends the cluster settings with every insert and query', async () => {
    const { url, requests } = await recordingServer();
    const warehouse = await openClickHouseWarehouse({ url, database: 'tally', cluster: 'tally_cluster' });
    expect(warehouse.cluster).toBe('tally_cluster');
    await warehouse.insert('events', [{ id: 'a' }]);
    await warehouse.command('SELECT 1');
    await warehouse.close();
    expect(requests.map(statementOf).map((s) => s.trim())).toEqual([
      'CREATE DATABASE IF NOT EXISTS tally ON CLUSTER tally_cluster',
      'INSERT INTO events FORMAT JSONEachRow',
      'SELECT 1',
    ]);
    for (const request of requests) {
      for (const [name, value] of Object.entries(CLUSTER_SETTINGS))
        expect(request.params.get(name), name).toBe(String(value));
    }
    expect(CLUSTER_SETTINGS.distributed_foreground_insert).toBe(1);
  });

  it('sends none of them to one server, and refuses a cluster name that is not a plain name', async () => {
    const { url, requests } = await recordingServer();
    const warehouse = await openClickHouseWarehouse({ url, database: 'tally' });
    expect(warehouse.cluster).toBeUndefined();
    await warehouse.insert('events', [{ id: 'a' }]);
    await warehouse.close();
    expect(statementOf(requests[0] as Recorded).trim()).toBe('CREATE DATABASE IF NOT EXISTS tally');
    for (const request of requests)
      for (const name of Object.keys(CLUSTER_SETTINGS)) expect(request.params.has(name)).toBe(false);
    await expect(
      openClickHouseWarehouse({ url, database: 'tally', cluster: 'c; DROP DATABASE tally' }),
    ).rejects.toThrow(/invalid cluster name/);
  });
});
