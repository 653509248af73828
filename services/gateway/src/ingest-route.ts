// POST /api/ingest: turns an accepted request into an IngestRecord and answers 202 only once the record
// log has made it durable. The checks after the rate limit, body parsing and admission run here, in the
// order docs/api.md lists their answers.
import type { TallyConfig } from '@tally/config';
import {
  type IngestEnvelope,
  type IngestRecord,
  isPlainObject,
  isRecordType,
  validateIngest,
} from '@tally/contract';
import type { RecordLog } from '@tally/log';
import type { OriginPolicy, TokenVerifier } from '@tally/tokens';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { countedClientIp } from './connection-caps.ts';
import type { CountryLookup } from './country.ts';
import { ingestError } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';
import { assertOriginAllowed } from './origin-policy.ts';
import { newRecordId } from './record-ids.ts';
import type { VisitorIds } from './visitor-id.ts';

export interface IngestRouteOptions {
  config: TallyConfig;
  log: RecordLog;
  tokens: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  origins?: OriginPolicy | undefined;
  visitorIds: VisitorIds;
  countries: CountryLookup;
  metrics?: GatewayMetrics | undefined;
}

/** Largest nesting of objects and arrays accepted in a body: deeper JSON is hostile, not analytics. */
export const MAX_DEPTH = 32;
const MAX_USER_AGENT = 512;
const ACCEPTED = '{"success":true}';

export const ingestRoute: FastifyPluginAsync<IngestRouteOptions> = async (app, options) => {
  const { config, log, tokens, origins, visitorIds, countries, metrics } = options;

  app.post('/api/ingest', { config: { rateLimit: {} } }, async (request, reply) => {
    const body = request.body;
    if (!isPlainObject(body)) throw ingestError('bad_request', 'body must be a JSON object');
    if (isRecordType(body.type)) request.recordType = body.type;
    if (nestingExceeds(body, MAX_DEPTH)) {
      throw ingestError('bad_request', `body is nested too deeply (at most ${MAX_DEPTH} levels)`);
    }

    // The header wins over the body field when both carry a token.
    const token = tokenOf(request, body);
    if (token === undefined) throw ingestError('missing_token');
    // A token unknown here may have just been created: verifyFresh checks the store again (throttled).
    const tokenInfo =
      typeof token === 'string' ? (tokens.verify(token) ?? (await tokens.verifyFresh(token))) : null;
    // Read keys (the dashboard's API) are no ingest tokens: refused like any unknown token.
    if (!tokenInfo || (tokenInfo.kind !== 'public' && tokenInfo.kind !== 'secret'))
      throw ingestError('invalid_token');
    request.projectId = tokenInfo.project_id; // refusals from here on count against it (refusals.ts)
    assertOriginAllowed(request, tokenInfo, origins);
    if (body.type === 'revenue' && tokenInfo.kind !== 'secret') throw ingestError('secret_token_required');

    const result = validateIngest(body);
    if (!result.ok) throw ingestError('bad_request', result.message);

    const record = await toRecord(result.value, tokenInfo.project_id, request);
    const started = performance.now();
    // A LogUnavailableError (not durable within APPEND_TIMEOUT_MS) becomes 503 + Retry-After in errors.ts.
    await log.append([record]);
    metrics?.appendSeconds.observe((performance.now() - started) / 1000);
    return reply.code(202).type('application/json; charset=utf-8').send(ACCEPTED);
  });

  async function toRecord(
    envelope: IngestEnvelope,
    projectId: string,
    request: FastifyRequest,
  ): Promise<IngestRecord> {
    const receivedAt = Date.now();
    const data = envelope.data as Record<string, unknown> & { visitor_fingerprint?: string | null };
    const userAgent = headerValue(request.headers['user-agent'])?.slice(0, MAX_USER_AGENT) ?? null;

    let derived = false;
    if (envelope.type !== 'revenue' && !data.visitor_fingerprint) {
      const id = visitorIds.derive(projectId, clientIpOf(request), userAgent ?? '', receivedAt);
      data.visitor_fingerprint = typeof id === 'string' ? id : await id;
      derived = true;
    }

    // The contract admits whole milliseconds from 2000 to 2100 only, so the client's value is kept as sent.
    const clientTimestamp = typeof data.timestamp === 'number' ? data.timestamp : null;
    const clamped =
      clientTimestamp !== null && clientTimestamp > receivedAt + config.FUTURE_TIMESTAMP_TOLERANCE_MS;

    return {
      // Record ids are UUIDs, compared in lower case: a retry in other case is the same record.
      id: envelope.id?.toLowerCase() ?? newRecordId(receivedAt),
      type: envelope.type,
      project_id: projectId,
      received_at: receivedAt,
      timestamp: clientTimestamp === null || clamped ? receivedAt : clientTimestamp,
      client_timestamp: clientTimestamp,
      timestamp_clamped: clamped,
      user_agent: userAgent,
      visitor_fingerprint_derived: derived,
      // Revenue comes from the merchant's servers: their address says nothing of the customer.
      ...(envelope.type === 'revenue'
        ? { country: null, region: null, city: null }
        : countries.placeOf(clientIpOf(request))),
      data,
    } as IngestRecord;
  }
};

/**
 * The client's address (request.ip), computed once per request: with TRUST_PROXY set, Fastify walks and
 * parses X-Forwarded-For again on every read of request.ip, and the rate limit and the visitor id both need it.
 * A request through a trusted proxy has it already, from the connection caps (the same trust function).
 */
export function clientIpOf(request: FastifyRequest): string {
  if (!request.clientIp) request.clientIp = countedClientIp(request.raw) ?? request.ip;
  return request.clientIp;
}

/** The token from X-API-Token, else the body's `token`; undefined when neither carries one. */
function tokenOf(request: FastifyRequest, body: Record<string, unknown>): unknown {
  const header = headerValue(request.headers['x-api-token']);
  if (header) return header;
  return body.token === null || body.token === '' ? undefined : body.token;
}

const headerValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** Whether objects and arrays nest deeper than `max`; iterative, so hostile input cannot overflow the stack. */
export function nestingExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
