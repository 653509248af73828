// The server timeouts that cut off slow clients (slowloris) come from the configuration: each phase of a
// connection is bounded. test/hostile-clients.test.ts shows them cutting real slow connections off.
import { afterEach, expect, it } from 'vitest';
import { type TestGateway, testGateway } from './testing.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

it('bounds headers, whole requests, idle sockets and keep-alive by default', async () => {
  gw = await testGateway();
  const { server } = gw.app;
  expect(server.headersTimeout).toBe(10_000);
  expect(server.requestTimeout).toBe(30_000);
  expect(server.timeout).toBe(30_000);
  expect(server.keepAliveTimeout).toBe(72_000);
});

it('takes the timeouts from the configuration, the headers timeout no longer than the request timeout', async () => {
  gw = await testGateway({
    HEADERS_TIMEOUT_MS: '9000',
    REQUEST_TIMEOUT_MS: '4000',
    CONNECTION_TIMEOUT_MS: '3000',
    KEEP_ALIVE_TIMEOUT_MS: '2000',
  });
  const { server } = gw.app;
  expect(server.headersTimeout).toBe(4000);
  expect(server.requestTimeout).toBe(4000);
  expect(server.timeout).toBe(3000);
  expect(server.keepAliveTimeout).toBe(2000);
});
