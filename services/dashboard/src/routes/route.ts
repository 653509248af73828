// Registers an operation of the table (api/operations.ts) with its schemas and access, and a handler:
// the caller is found and checked before the handler runs, so no handler can forget to; every answer,
// errors included, is sent with Cache-Control: no-store.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorise, type Caller, callerOf } from '../access.ts';
import { operation } from '../api/operations.ts';
import type { DashboardDeps } from '../deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

export type Handler = (
  request: FastifyRequest<{
    Params: Record<string, string>;
    Querystring: Record<string, unknown>;
    Body: unknown;
  }>,
  reply: FastifyReply,
) => Promise<unknown>;

export function route(
  app: FastifyInstance,
  deps: DashboardDeps,
  operationId: string,
  handler: Handler,
): void {
  const op = operation(operationId);
  const response: Record<number, unknown> = {};
  // Only JSON bodies are serialised by schema; CSV answers are strings sent as they are.
  for (const [status, schema] of Object.entries(op.responses)) if (schema) response[Number(status)] = schema;
  app.route({
    method: op.method,
    url: op.url,
    schema: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.querystring ? { querystring: op.querystring } : {}),
      ...(op.body ? { body: op.body } : {}),
      response,
    },
    config: {
      access: op.access,
      ...(op.access === 'public' && op.method === 'POST' ? { rateLimit: deps.attemptLimit } : {}),
    },
    // Answers of the API (figures, sessions, errors) are for their caller only: no cache keeps them.
    onSend: async (_request, reply, payload) => {
      reply.header('cache-control', 'no-store');
      return payload;
    },
    preHandler: async (request) => {
      request.caller = await callerOf(request, deps);
      authorise(request.caller, op.access, (request.params as { project?: string }).project);
    },
    handler: handler as never,
  });
}
