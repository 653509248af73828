// One request at a time on each connection. Node parses every request pipelined on a connection as soon as
// its bytes arrive and emits 'request' for each at once, queuing their responses in order, so Fastify runs
// their handlers concurrently: when one response closes the connection (a 413 whose body was never read,
// the 503 while draining, a client's `Connection: close`), the requests behind it have already been
// handled, their records appended to the log, though their answers can never be sent.
// ConnectionOrder hands a connection's next request to Fastify only once the previous response has
// finished, and only if the connection can still carry an answer; otherwise the request is dropped unseen
// (Node discards it with the socket), so nothing is stored that is not answered. Without pipelining, the
// common case, a request is handed over at once, at the cost of one 'close' listener. An answer to one of
// Node's client errors (a malformed request, a timeout) waits its turn the same way, behind the responses
// owed to the complete requests before it, and ends the connection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

type Turn = { req: IncomingMessage; res: ServerResponse } | { finalAnswer: () => void };

interface ConnectionState {
  /** The request in flight. */
  current: IncomingMessage | undefined;
  /** Turns that arrived while an earlier one was in flight, oldest first. */
  waiting: Turn[];
  /** The connection can carry no further answer: whatever else arrives on it is dropped. */
  ended: boolean;
  /** Reading was paused here while turns wait (Node's own guard against a flood of pipelined requests
   * counts queued response bytes, and a waiting request has none yet). */
  paused: boolean;
}

/**
 * Reading from a connection is paused the way Node's HTTP server pauses it for its own flood guard: with
 * its `_paused` flag, which the parser's readStart (called after every request) honours and `pause()`
 * alone would not (it would start reading again at once), and which makes it pause its parser at the end
 * of the bytes it is parsing; resuming resumes that parser too. Not public API, but Node's own mechanism
 * since long before Node 20; the pipelining test fails if reading is no longer held back.
 */
type HttpSocket = Socket & { _paused?: boolean; parser?: { resume(): void } | null };

function stopReading(socket: HttpSocket): void {
  socket._paused = true;
  socket.pause();
}

function startReading(socket: HttpSocket): void {
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

export class ConnectionOrder {
  /** Connections with a turn in flight (or ended); an idle connection has no entry. */
  readonly #connections = new WeakMap<Socket, ConnectionState>();
  readonly #handle: RequestListener;

  constructor(handle: RequestListener) {
    this.#handle = handle;
  }

  /** The server's 'request' (and 'checkExpectation') listener. */
  readonly dispatch: RequestListener = (req, res) => {
    this.#enqueue(req.socket, { req, res });
  };

  /**
   * Runs `answer`, which writes a last response and ends the connection, once every complete request before
   * it on the connection has been answered: at once when none is in flight, or when the one in flight is
   * incomplete (the error is then about that request: its body will never arrive). When the connection
   * can carry no answer any more, the socket is destroyed instead.
   */
  finally(socket: Socket, answer: () => void): void {
    const state = this.#connections.get(socket);
    if (state && !state.ended && state.current && !state.current.complete) {
      this.#end(socket, state, answer);
      return;
    }
    this.#enqueue(socket, { finalAnswer: answer });
  }

  #enqueue(socket: Socket, turn: Turn): void {
    const state = this.#connections.get(socket);
    if (state === undefined) {
      const fresh: ConnectionState = { current: undefined, waiting: [], ended: false, paused: false };
      this.#connections.set(socket, fresh);
      if (socket.writable) this.#start(socket, fresh, turn);
      else this.#drop(socket, fresh, [turn]);
      return;
    }
    if (state.ended) {
      this.#drop(socket, state, [turn]);
      return;
    }
    state.waiting.push(turn);
    if (!state.paused) {
      state.paused = true;
      stopReading(socket);
    }
  }

  #start(socket: Socket, state: ConnectionState, turn: Turn): void {
    if ('finalAnswer' in turn) {
      this.#end(socket, state, turn.finalAnswer);
      return;
    }
    state.current = turn.req;
    // 'close' follows 'finish' (a tick later, once Node has handed the socket to the next queued response
    // and, for a last response, started closing the socket), or comes alone when the connection is lost.
    turn.res.once('close', () => this.#next(socket, state, turn.res));
    this.#handle(turn.req, turn.res);
  }

  #next(socket: Socket, state: ConnectionState, finished: ServerResponse): void {
    // A response marked last (Connection: close) has made Node end the socket, so it is no longer writable.
    state.current = undefined;
    if (!finished.writableFinished || !socket.writable || socket.destroyed) {
      this.#drop(socket, state, state.waiting.splice(0));
      return;
    }
    const turn = state.waiting.shift();
    if (turn === undefined) {
      this.#connections.delete(socket);
      return;
    }
    if (state.waiting.length === 0 && state.paused) {
      state.paused = false;
      // A client that does not read its answers stays paused: Node resumes it once they drain.
      if (!socket.writableNeedDrain) startReading(socket);
    } else if (state.paused) {
      // Writing the last answer may have made Node resume reading (its own guard found nothing queued).
      stopReading(socket);
    }
    this.#start(socket, state, turn);
  }

  #end(socket: Socket, state: ConnectionState, answer: () => void): void {
    state.ended = true;
    state.waiting.length = 0;
    if (socket.writable && !socket.destroyed) answer();
    else socket.destroy();
  }

  /**
   * Drops turns the connection cannot answer: a request is never handed over (Node discards it with the
   * socket, which is already closing); an answer to a client error becomes the end of the connection.
   */
  #drop(socket: Socket, state: ConnectionState, turns: Turn[]): void {
    state.ended = true;
    if (turns.some((turn) => 'finalAnswer' in turn)) socket.destroy();
  }
}
