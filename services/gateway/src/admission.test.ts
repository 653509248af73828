// Admission control over real sockets: with GATEWAY_MAX_IN_FLIGHT (or GATEWAY_MAX_PENDING_APPENDS) reached
// by requests waiting for a held record log, the next request is answered at once with 503, Retry-After
// and the error body, counted in tally_gateway_shed_total; the admitted ones get their 202 once the log
// confirms, and their records are in it; the shed one is not, and the connection it came on still works.
// A request whose body is still arriving holds no slot: it is admitted once its body has been read.
import { join } from 'node:path';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { afterEach, expect, it } from 'vitest';
import { OVERLOADED_RETRY_AFTER_S } from './errors.ts';
import { converse, recordsIn, type SlowBody, slowBody, type TestGateway, testGateway } from './testing.ts';

/** An embedded log whose appends wait for release(); `waiting` counts the appends held so far. */
function gatedLog(dataDir: string) {
  const inner = openEmbeddedLog({ path: join(dataDir, 'log') });
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { waiting: 0 };
  const log: RecordLog = {
    consumer: (o) => inner.consumer(o),
    deadLetters: inner.deadLetters,
    health: () => inner.health(),
    close: () => inner.close(),
    async append(records) {
      state.waiting++;
      await gate;
      return inner.append(records);
    },
  };
  return { log, inner, state, release: () => release() };
}

function request(token: string, id: string): string {
  const body = JSON.stringify({
    type: 'pageview',
    id,
    data: { session_id: 's1', visitor_fingerprint: 'fp1', url: 'https://example.com/' },
  });
  return (
    'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Content-Type: application/json\r\nX-API-Token: ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

const ids = ['0190f5e4-5f6a-7000-8000-000000000001', '0190f5e4-5f6a-7000-8000-000000000002'];
const shedId = '0190f5e4-5f6a-7000-8000-0000000000ff';

let gw: TestGateway | undefined;
const slow: SlowBody[] = [];
afterEach(async () => {
  for (const client of slow.splice(0)) client.stop();
  await gw?.close();
  gw = undefined;
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function shedCount(metrics: TestGateway['metrics'], reason: string): Promise<number> {
  const shed = await metrics.shed.get();
  return shed.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

for (const [limit, env] of [
  ['in_flight', { GATEWAY_MAX_IN_FLIGHT: '2' }],
  ['pending_appends', { GATEWAY_MAX_PENDING_APPENDS: '2' }],
] as const) {
  it(`sheds beyond its ${limit} limit at once with 503 + Retry-After; the admitted records are durable`, async () => {
    let gated: ReturnType<typeof gatedLog> | undefined;
    gw = await testGateway(env, {
      openLog: (dir) => {
        gated = gatedLog(dir);
        return gated.log;
      },
    });
    if (!gated) throw new Error('log not opened');
    const held = gated;
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = gw.app.server.address() as { port: number };

    // Two requests, each on its own connection, admitted and waiting for the log.
    const admitted = ids.map((id) => converse(port, request(gw?.publicToken ?? '', id), { expected: 1 }));
    await until(() => held.state.waiting === 2);

    // A third and a fourth, pipelined on one connection, are answered at once while the other two still
    // wait: their bodies are read past, so the connection stays in step and open.
    const shed = await converse(port, request(gw.publicToken, shedId).repeat(2), { expected: 2 });
    expect(shed.responses.map((r) => r.status)).toEqual([503, 503]);
    const [answer] = shed.responses;
    expect(answer?.status).toBe(503);
    expect(answer?.headers['retry-after']).toBe(String(OVERLOADED_RETRY_AFTER_S));
    expect(answer?.headers['access-control-allow-origin']).toBe('*');
    expect(JSON.parse(answer?.body ?? '')).toEqual({ error: 'Service temporarily unavailable, retry later' });
    expect(shed.closedByServer).toBe(false);
    expect(held.state.waiting).toBe(2);
    expect(await shedCount(gw.metrics, limit)).toBe(2);

    held.release();
    for (const conversation of await Promise.all(admitted)) {
      expect(conversation.responses[0]?.status).toBe(202);
    }
    const stored = await recordsIn(held.inner, 2);
    expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());

    // Load gone: the same record, retried, is accepted.
    const retried = await converse(port, request(gw.publicToken, shedId), { expected: 1 });
    expect(retried.responses[0]?.status).toBe(202);
    const admittedTotal = (await gw.metrics.admitted.get()).values[0]?.value;
    expect(admittedTotal).toBe(3);
  });
}

it('admits a request once its body has been read: bodies still arriving hold no slot', async () => {
  gw = await testGateway({ GATEWAY_MAX_IN_FLIGHT: '2', BODY_TIMEOUT_MS: '60000' });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = gw.app.server.address() as { port: number };
  // Three requests whose headers are in and whose bodies trickle (each has its 100 Continue: taken on).
  for (let i = 0; i < 3; i++) {
    slow.push(slowBody({ port, token: gw.publicToken, length: 1000, everyMs: 200, deadlineMs: 30_000 }));
  }
  await Promise.all(slow.map((client) => client.heard));
  const answers = await Promise.all(
    ids.map((id) => converse(port, request(gw?.publicToken ?? '', id), { expected: 1 })),
  );
  expect(answers.map((answer) => answer.responses[0]?.status)).toEqual([202, 202]);
  for (const client of slow) expect(client.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  expect(await shedCount(gw.metrics, 'in_flight')).toBe(0);
});
