// Allowed origins per project: a browser request (one with an Origin header) that carries a public token
// of a project listing its origins (`tally projects set <id> --allowed-origins …`) must come from one of
// them, or it is refused with 403. Requests without Origin (servers, curl) pass, and secret tokens are not
// bound to origins. A CORS preflight carries no token, so it is refused only for an origin no project
// allows (see OriginPolicy.anyProjectAllows); the POST is checked against its own project either way. The
// policy is the token verifier's, loaded with the tokens from the same store, so it reaches every gateway
// (file or Redis) as tokens do.
import type { OriginPolicy, TokenInfo } from '@tally/tokens';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ingestError } from './errors.ts';

const originOf = (request: FastifyRequest): string | undefined => {
  const origin = request.headers.origin;
  return Array.isArray(origin) ? origin[0] : origin;
};

/** Throws OriginNotAllowedError when a browser sends a project's public token from an origin it does not list. */
export function assertOriginAllowed(
  request: FastifyRequest,
  token: Pick<TokenInfo, 'kind' | 'project_id'>,
  policy: OriginPolicy | undefined,
): void {
  const origin = originOf(request);
  if (origin === undefined || token.kind !== 'public' || !policy) return;
  if (!policy.originAllowed(token.project_id, origin)) throw ingestError('origin_not_allowed');
}

/**
 * An onRequest hook refusing the CORS preflight of an origin no project allows, so that the browser is
 * never told it may send (a 403 fails the preflight: it needs a 2xx). Registered ahead of @fastify/cors,
 * which would answer it 204.
 */
export function refuseDisallowedPreflight(policy: OriginPolicy): onRequestHookHandler {
  return (request, _reply, done) => {
    const origin = originOf(request);
    const preflight =
      request.method === 'OPTIONS' && origin && request.headers['access-control-request-method'];
    done(preflight && !policy.anyProjectAllows(origin) ? ingestError('origin_not_allowed') : undefined);
  };
}
