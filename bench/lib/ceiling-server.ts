// The ceiling the gateway is compared with: a bare Fastify server on the same Node that takes the same
// requests, parses their JSON body (Fastify's default parser) and answers 202 with the gateway's body —
// no rate limit, token, validation or record log. Prints `listening on <url>` once it accepts requests.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (error) {
    done(error as Error, undefined);
  }
});
app.post('/api/ingest', async (_request, reply) =>
  reply.code(202).type('application/json; charset=utf-8').send('{"success":true}'),
);

const url = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening on ${url}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
