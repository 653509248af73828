// Test support: HTTP/1.1 over a raw TCP connection, for tests about bytes on the wire (pipelining,
// malformed requests, what Node's HTTP server answers itself, a body trickled a byte at a time from a
// loopback address of the test's choice) that an HTTP client would not send or would hide. Exported
// through @tally/gateway/testing.
import { connect, type Socket } from 'node:net';

export interface WireResponse {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * The complete responses at the start of `data`, in order (a 100 Continue counts as one). A body is as long
 * as its Content-Length; one without Content-Length runs to the end of the data, and counts only once the
 * connection has ended.
 */
export function parseResponses(data: Buffer, ended: boolean): WireResponse[] {
  return parseFrom(data, 0, ended).responses;
}

/** The complete responses in `data` from byte `start` on, and where the first incomplete one begins. */
function parseFrom(data: Buffer, start: number, ended: boolean): { responses: WireResponse[]; next: number } {
  const responses: WireResponse[] = [];
  let at = start;
  while (at < data.length) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine = '', ...lines] = data.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    const bodyStart = end + 4;
    const declared = bodyless(status) ? '0' : headers['content-length'];
    const bodyEnd = declared === undefined ? (ended ? data.length : -1) : bodyStart + Number(declared);
    if (bodyEnd < 0 || bodyEnd > data.length) break;
    responses.push({ status, headers, body: data.subarray(bodyStart, bodyEnd).toString('utf8') });
    at = bodyEnd;
  }
  return { responses, next: at };
}

/** 1xx, 204 and 304 responses have no body (RFC 9112, 6.3). */
const bodyless = (status: number) => status < 200 || status === 204 || status === 304;

export interface Conversation {
  responses: WireResponse[];
  /** Whether the server ended the connection (rather than the client, once it had its responses). */
  closedByServer: boolean;
  /** Everything the server sent, as latin1 text. */
  text: string;
}

/**
 * Opens a connection to 127.0.0.1:`port`, writes `bytes` in one write, and collects the responses until
 * `expected` of them have arrived or the server ends the connection; rejects after `timeoutMs`.
 */
export function converse(
  port: number,
  bytes: Buffer | string,
  { expected = Number.POSITIVE_INFINITY, timeoutMs = 10_000 }: { expected?: number; timeoutMs?: number } = {},
): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    // The bytes of the response not complete yet, and the responses parsed so far.
    let pending: Buffer = Buffer.alloc(0);
    const responses: WireResponse[] = [];
    const parse = (chunk: Buffer, ended: boolean) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const parsed = parseFrom(pending, 0, ended);
      responses.push(...parsed.responses);
      pending = pending.subarray(parsed.next);
    };
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      parse(Buffer.alloc(0), closedByServer);
      resolve({ responses, closedByServer, text: Buffer.concat(received).toString('latin1') });
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no end of the conversation within ${timeoutMs} ms (${responses.length} responses)`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      parse(chunk, false);
      if (responses.length >= expected) finish(false);
    });
    // A reset after the server answered and closed (it had unread bytes from us) ends it like a close.
    socket.on('error', () => finish(true));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(bytes);
  });
}

export interface SlowBody {
  /** Everything the gateway sent, as latin1 text. */
  received(): string;
  /** Whether the gateway ended the connection (rather than the client at its deadline). */
  readonly closedByServer: boolean;
  /** Whether the connection is closed, by either side. */
  readonly closed: boolean;
  /** Settles when the connection is closed. */
  readonly done: Promise<void>;
  /**
   * Settles once the gateway has answered something (a 100 Continue: it has parsed the headers and handed
   * the request on, in the same turn) or closed the connection.
   */
  readonly heard: Promise<void>;
  /** Closes the connection from the client's side. */
  stop(): void;
}

/**
 * Connects from `localAddress` and sends the headers of a POST with `Content-Length: length` and
 * `Expect: 100-continue`; from the gateway's 100 Continue on, sends a space every `everyMs`, never the
 * whole body, until the gateway closes the connection or `deadlineMs` passes (then the client closes it).
 */
export function slowBody(options: {
  port: number;
  /** The loopback address to connect from (the client IP the gateway sees); 127.0.0.1 by default. */
  localAddress?: string;
  token: string;
  length: number;
  everyMs: number;
  deadlineMs: number;
  headers?: Record<string, string>;
}): SlowBody {
  const socket: Socket = connect({
    host: '127.0.0.1',
    port: options.port,
    localAddress: options.localAddress,
  });
  let text = '';
  let timer: NodeJS.Timeout | undefined;
  let closedByServer = false;
  let closed = false;
  let heard: () => void = () => {};
  const heardPromise = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const deadline = setTimeout(() => socket.destroy(), options.deadlineMs);
  const done = new Promise<void>((resolve) => {
    socket.on('close', () => {
      closed = true;
      clearInterval(timer);
      clearTimeout(deadline);
      heard();
      resolve();
    });
  });
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    heard();
    if (timer === undefined && text.startsWith('HTTP/1.1 100 ')) {
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, options.everyMs);
    }
  });
  socket.on('end', () => {
    closedByServer = true;
  });
  socket.on('error', () => {
    closedByServer = true; // reset by the gateway
  });
  const extra = Object.entries(options.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.once('connect', () =>
    socket.write(
      'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `X-API-Token: ${options.token}\r\nContent-Length: ${options.length}\r\nExpect: 100-continue\r\n${extra}\r\n`,
    ),
  );
  return {
    received: () => text,
    get closedByServer() {
      return closedByServer;
    },
    get closed() {
      return closed;
    },
    done,
    heard: heardPromise,
    stop: () => socket.destroy(),
  };
}
