// Errors as data. Each service answers its errors from one table: a row per kind of answer, with its
// status, its body and its headers (PostHog capture's error enum), and ServiceError, the one class its code
// throws, names the row. The service maps whatever a request raised to one of them in one place, and the
// row says how it is answered. Bodies follow one convention: `{ message }` for what the client sent wrong,
// `{ error }` for credentials, limits and availability. A body's text is the row's fixed one, or the
// error's message, which the service writes itself: never an internal detail (that stays in `cause`, for
// the log).

/** How one kind of error is answered: a row of a service's table. */
export interface ErrorAnswer {
  /** The HTTP status (a row may leave it to the error: Fastify's other 4xx). */
  status: number;
  /** The body's one key: `message` (the client's input was wrong), `error` (credentials, limits, availability). */
  key: 'message' | 'error';
  /** The body's text when it is fixed; otherwise the error's message. */
  text?: string;
  /** The error's message when it is made without one (and the body's text unless `text` is set). */
  message?: string;
  /** Headers this answer needs besides the service's common ones (Allow on a 405, …). */
  headers?: Readonly<Record<string, string>>;
  /** Seconds after which a retry may succeed (sent as Retry-After). */
  retryAfterSeconds?: number;
  /** Whether the same request may succeed later (429, 503, 408): a retryable 5xx is logged as a warning. */
  retryable?: boolean;
  /** Whether the connection is closed after this answer, because what follows on it cannot be trusted. */
  closesConnection?: boolean;
}

/** A service's errors: each kind and how it is answered. */
export type ErrorTable<Kind extends string> = Readonly<Record<Kind, ErrorAnswer>>;

/** What an error of a table may say besides its kind and message. */
export interface ServiceErrorOptions {
  /** What caused it, for the log (never answered). */
  cause?: unknown;
  /** The status, for a row that leaves it to the error. */
  status?: number;
  /** Retry-After, for a row whose wait depends on the case (a rate limit's window). */
  retryAfterSeconds?: number;
}

/** An error a service answers with: a row of its table (`kind`), and the message its body may carry. */
export class ServiceError<Kind extends string = string> extends Error {
  readonly kind: Kind;
  readonly statusCode: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly closesConnection: boolean;
  readonly #table: ErrorTable<Kind>;
  readonly #answer: ErrorAnswer;

  constructor(table: ErrorTable<Kind>, kind: Kind, message?: string, options: ServiceErrorOptions = {}) {
    const answer = table[kind];
    super(
      message ?? answer.message ?? answer.text ?? kind,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ServiceError';
    this.kind = kind;
    this.#table = table;
    this.#answer = answer;
    this.statusCode = options.status ?? answer.status;
    this.retryable = answer.retryable ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds ?? answer.retryAfterSeconds;
    this.closesConnection = answer.closesConnection ?? false;
  }

  /** The JSON body: the row's key, with its fixed text or this error's message. */
  body(): Record<string, string> {
    return { [this.#answer.key]: this.#answer.text ?? this.message };
  }

  /** The headers the row adds to the service's common ones. */
  headers(): Record<string, string> {
    return { ...this.#answer.headers };
  }

  /** Whether this error is a row of `table`. */
  isOf<Of extends string>(table: ErrorTable<Of>): this is ServiceError<Of> {
    return (this.#table as unknown) === table;
  }
}

/** A service's errors: the maker of its table's errors, and the test that something thrown is one of them. */
export function serviceErrors<Kind extends string>(table: ErrorTable<Kind>) {
  return {
    /** An error of `kind`, with the message its body carries where the row has no fixed text. */
    error: (kind: Kind, message?: string, options?: ServiceErrorOptions): ServiceError<Kind> =>
      new ServiceError<Kind>(table, kind, message, options),
    /** Whether `error` is one of this table's (anything else is still to be mapped). */
    owns: (error: unknown): error is ServiceError<Kind> => error instanceof ServiceError && error.isOf(table),
  };
}
