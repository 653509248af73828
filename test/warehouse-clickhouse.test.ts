// The warehouse conformance suite on the ClickHouse backend (@clickhouse/client over HTTP), against a
// real ClickHouse engine: CLICKHOUSE_URL when set, else ClickHouse's HTTP interface over chDB (see
// test/setup/services.ts). A database per test.
import { openClickHouseWarehouse, WarehouseUnavailableError } from '@tally/warehouse';
import { describeWarehouseConformance } from '@tally/warehouse/conformance';
import { expect, inject, it } from 'vitest';

describeWarehouseConformance('ClickHouse (@clickhouse/client)', (database) =>
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
