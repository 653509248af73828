// The warehouse's and the reports' conformance suites on the ClickHouse backend (@clickhouse/client over
// HTTP), against a real ClickHouse engine: CLICKHOUSE_URL when set, else ClickHouse's HTTP interface over
// chDB (see test/setup/services.ts). A database per test. And what an HTTP answer that is not ClickHouse's
// (a proxy's, a server's refusal of a URL too long) is taken for.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeReportsConformance } from '@tally/reports/conformance';
import { openClickHouseWarehouse, WarehouseError, WarehouseUnavailableError } from '@tally/warehouse';
import { describeWarehouseConformance } from '@tally/warehouse/conformance';
import { expect, inject, it } from 'vitest';

describeWarehouseConformance('ClickHouse (@clickhouse/client)', (database) =>
  openClickHouseWarehouse({ url: inject('clickhouseUrl'), database }),
);
describeReportsConformance('ClickHouse (@clickhouse/client)', (database) =>
  openClickHouseWarehouse({ url: inject('clickhouseUrl'), database }),
);

it('reports an unreachable server as a retryable WarehouseUnavailableError', async () => {
  // Port 9 on loopback (discard): nothing listens there in the test environment.
  const failure = await openClickHouseWarehouse({
    url: 'http://127.0.0.1:9',
    database: 'unreachable',
    requestTimeoutMs: 2000,
  }).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(WarehouseUnavailableError);
  expect(failure).toMatchObject({ retryable: true });
});

/** A server in front of the warehouse that answers every request with `status` and `body`, as a proxy may. */
async function answering(status: number, body = ''): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status, { 'content-type': 'text/html' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

it("reports an HTTP 4xx that is not ClickHouse's as the warehouse's failure, not an outage; a 5xx as an outage", async () => {
  for (const [status, body] of [
    [431, ''],
    [413, '<html><body>413 Request Entity Too Large</body></html>'],
    [414, 'URI Too Long'],
    [400, '<html>Bad Request</html>'],
  ] as const) {
    const server = await answering(status, body);
    try {
      const failure = await openClickHouseWarehouse({ url: server.url, database: 'refused' }).catch(
        (error: unknown) => error,
      );
      expect(failure, String(status)).toBeInstanceOf(WarehouseError);
      expect(failure, String(status)).not.toBeInstanceOf(WarehouseUnavailableError);
      expect(failure).toMatchObject({
        httpStatus: status,
        retryable: false,
        refusedData: false,
        tooLarge: false,
      });
      expect((failure as WarehouseError).message).toBe(
        `the warehouse answered HTTP ${status} without a ClickHouse error`,
      );
    } finally {
      await server.close();
    }
  }
  for (const status of [502, 503, 429]) {
    const server = await answering(status, 'upstream unavailable');
    try {
      const failure = await openClickHouseWarehouse({ url: server.url, database: 'away' }).catch(
        (error: unknown) => error,
      );
      expect(failure, String(status)).toBeInstanceOf(WarehouseUnavailableError);
      expect(failure).toMatchObject({ httpStatus: status, retryable: true });
    } finally {
      await server.close();
    }
  }
});
