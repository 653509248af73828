// Nothing of a request's values in any log line on the gateway's failure paths that log (the record log
// too slow, the record log failing); the input errors, which are not logged at all, are sent too. The lines
// are captured and checked for a marker that every value of the requests carries.

import { join } from 'node:path';
import { Writable } from 'node:stream';
import { openEmbeddedLog } from '@tally/log';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { testGateway } from './testing.ts';

const MARKER = 'PAYLOAD-MARKER-9b2e';

it('logs no request value on the gateway’s failure paths (log unavailable, log failing)', async () => {
  const gatewayLines: string[] = [];
  const gatewayLogger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk, _encoding, done) {
        gatewayLines.push(String(chunk));
        done();
      },
    }),
  );
  let mode: 'slow' | 'failing' = 'slow';
  const gw = await testGateway(
    { APPEND_TIMEOUT_MS: '50' },
    {
      logger: gatewayLogger,
      openLog: (dataDir) => {
        const inner = openEmbeddedLog({ path: join(dataDir, 'log') });
        return {
          consumer: (o) => inner.consumer(o),
          deadLetters: inner.deadLetters,
          health: () => inner.health(),
          close: () => inner.close(),
          append: () =>
            mode === 'slow' ? new Promise(() => {}) : Promise.reject(new Error('disk full (no record here)')),
        };
      },
    },
  );
  try {
    const body = JSON.stringify({
      type: 'pageview',
      data: { session_id: `s-${MARKER}`, url: `https://x.example/${MARKER}`, title: MARKER },
    });
    for (const next of ['slow', 'failing'] as const) {
      mode = next;
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/json', 'x-api-token': gw.publicToken, 'user-agent': MARKER },
        payload: body,
      });
      expect(res.statusCode).toBe(503);
      // and the input errors, which are not logged at all
      await gw.app.inject({ method: 'POST', url: `/api/ingest?${MARKER}`, payload: `{${MARKER}` });
    }
  } finally {
    await gw.close();
  }
  const text = gatewayLines.join('');
  expect(text).toContain('answered 503');
  expect(text).not.toContain(MARKER);
});
