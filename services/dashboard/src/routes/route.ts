// Registers an operation of the table (api/operations.ts) with its schemas and access, and a handler:
// the caller is found and checked before the handler runs, so no handler can forget to; every answer,
// errors included, is sent with Cache-Control: no-store.
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorise, type Caller, callerOf } from '../access.ts';
import {
  type Access,
  type Operation,
  type OperationId,
  type OperationOf,
  operation,
} from '../api/operations.ts';
import type { DashboardDeps } from '../deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** Who may call the route's operation (operations.ts). */
    access?: Access;
  }
}

/** The project a request's path names, if its operation has one. */
function projectOf(params: unknown): string | undefined {
  return typeof params === 'object' &&
    params !== null &&
    'project' in params &&
    typeof params.project === 'string'
    ? params.project
    : undefined;
}

/** The type a part of an operation's request has once Fastify validated it against the part's schema. */
type Part<Op, Key extends string, Absent> = Op extends { readonly [K in Key]: infer S extends TSchema }
  ? Static<S>
  : Absent;

/** An operation's request as its handler sees it: params, query string and body typed from its schemas. */
export interface RequestOf<Id extends OperationId> {
  Params: Part<OperationOf<Id>, 'params', Record<string, never>>;
  Querystring: Part<OperationOf<Id>, 'querystring', Record<string, never>>;
  Body: Part<OperationOf<Id>, 'body', undefined>;
}

export type Handler<Id extends OperationId> = (
  request: FastifyRequest<RequestOf<Id>>,
  reply: FastifyReply,
) => Promise<unknown>;

export function route<Id extends OperationId>(
  app: FastifyInstance,
  deps: DashboardDeps,
  operationId: Id,
  handler: Handler<Id>,
): void {
  const op: Operation = operation(operationId);
  const response: Record<number, unknown> = {};
  // Only JSON bodies are serialised by schema; CSV answers are strings sent as they are.
  for (const [status, schema] of Object.entries(op.responses)) if (schema) response[Number(status)] = schema;
  app.route<RequestOf<Id>>({
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
      authorise(request.caller, op.access, projectOf(request.params));
    },
    handler,
  });
}
