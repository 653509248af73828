// Compressed request bodies: a preParsing hook that decodes `Content-Encoding: gzip` (and its old name
// x-gzip) as a stream with Node's zlib, so that Fastify's body limit applies to the decoded bytes: a gzip
// bomb is cut off at BODY_LIMIT and never decoded further, and memory stays bounded. `identity` means no
// encoding; anything else (deflate, br, zstd, unknown or stacked codings) is refused with 415.
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { preParsingHookHandler } from 'fastify';
import { ingestError, payloadTooLarge } from './errors.ts';

/** The body's codings, outermost last, without `identity` (RFC 9110, 8.4); [] for a plain body. */
export function contentCodings(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/**
 * The preParsing hook. Fastify reads the stream it returns instead of the request, refuses more than
 * `bodyLimit` bytes from it (413; the stream itself stops there too), and compares its
 * `receivedEncodedLength` (the bytes taken from the request) with Content-Length, which counts the
 * encoded body.
 */
export function decodeContentEncoding(bodyLimit: number): preParsingHookHandler {
  return (request, reply, payload, done) => {
    const codings = contentCodings(request.headers['content-encoding']);
    // Nothing to decode, or a request no route takes (the 404 and 405 answers do not read bodies).
    if (codings.length === 0 || request.is404) return done(null, payload);
    if (codings.length > 1 || (codings[0] !== 'gzip' && codings[0] !== 'x-gzip')) {
      return done(ingestError('unsupported_content_encoding'));
    }
    done(null, gunzipped(payload, bodyLimit, reply.raw));
  };
}

/** What Fastify reads instead of the request: the decoded bytes, and how many encoded ones came in. */
class DecodedBody extends PassThrough {
  receivedEncodedLength = 0;
}

function gunzipped(
  encoded: Readable,
  bodyLimit: number,
  response: { once(event: 'close', listener: () => void): unknown },
): DecodedBody {
  const decoded = new DecodedBody();
  const inflater = createGunzip();
  let decodedLength = 0;
  const tooLarge = () => {
    inflater.destroy();
    decoded.destroy(payloadTooLarge(bodyLimit));
  };

  encoded.on('data', (chunk: Buffer) => {
    decoded.receivedEncodedLength += chunk.length;
    // An encoded body over the limit is refused at once (a gzip header can hold an endless file name).
    if (decoded.receivedEncodedLength > bodyLimit) tooLarge();
  });
  // A request that fails (the client went away) fails the decoding with it.
  encoded.once('error', (error) => decoded.destroy(error));
  // pipe, not pipeline: a decoding error must leave the request alone, so that the error handler can keep
  // the connection when the body was read to its end.
  encoded.pipe(inflater);

  inflater.on('data', (chunk: Buffer) => {
    if (decoded.destroyed) return;
    decodedLength += chunk.length;
    if (decodedLength <= bodyLimit) {
      if (!decoded.write(chunk)) inflater.pause();
      return;
    }
    // Past the limit: inflate no further, but read the rest of the encoded body (no more than the limit,
    // see above) before answering 413, so that the connection stays in step and is kept.
    inflater.destroy();
    encoded.unpipe(inflater);
    if (encoded.readableEnded) tooLarge();
    else {
      encoded.once('end', tooLarge);
      encoded.resume();
    }
  });
  decoded.on('drain', () => inflater.resume());
  inflater.once('end', () => decoded.end());
  inflater.once('error', (error) => decoded.destroy(error));
  // Whatever the outcome, the inflater and its buffers are freed once the answer is out.
  response.once('close', () => {
    inflater.destroy();
    decoded.destroy();
  });
  return decoded;
}
