// Typed warehouse errors. Each says whether retrying the same operation may succeed (network, overload),
// whether the engine refused the data itself (a value it cannot parse or store, a constraint), and whether
// it refused the statement for its size alone (a smaller batch passes), so the consumers know whether to
// retry, to find the rows at fault and set them aside, or to land the batch in parts. The engine's own
// message can quote the rows of an insert or the parameters of a query: it is kept in `detail` (not
// enumerable, not a `cause`), for the dead-letter store and the CLI, and never in `message`, which logs get.
// A code is not always enough: TOO_MANY_PARTS (252) is an overload when merges lag behind inserts (retry
// later) and a refusal of this very insert when its block spans too many partitions (retrying it forever
// changes nothing), so those codes are told apart by the engine's message, read here and never logged.

/** ClickHouse error codes that mean "try again later" rather than "this statement is wrong". */
const RETRYABLE_CODES = new Set([
  3, // UNEXPECTED_END_OF_FILE (connection cut mid-response)
  159, // TIMEOUT_EXCEEDED (a loaded server; a statement too slow for any server would be the warehouse's)
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  241, // MEMORY_LIMIT_EXCEEDED (the server's or the user's total: others' queries hold it; see SIZE_REFUSALS)
  242, // TABLE_IS_READ_ONLY (a replica in read-only mode while it recovers)
  252, // TOO_MANY_PARTS (merges slower than inserts: an overload; see SIZE_REFUSALS)
  319, // UNKNOWN_STATUS_OF_INSERT
  425, // SYSTEM_ERROR
  999, // KEEPER_EXCEPTION
]);
// Not retryable: 164 READONLY is the user's `readonly` setting (a configuration, not a recovering replica,
// which is 242), so it is the warehouse's failure: retried with backoff by the consumers and logged as an
// error, instead of retried at once as an outage.

/**
 * Refusals of one statement for its size, under a code that otherwise means an overload: the same
 * statement fails again however long one waits, and the same rows in smaller statements pass. Matched on
 * the engine's message (`detail`).
 */
const SIZE_REFUSALS: ReadonlyArray<{ code: number; message: RegExp }> = [
  // max_partitions_per_insert_block: one INSERT block whose rows fall in more partitions than the limit.
  { code: 252, message: /too many partitions for single insert block/i },
  // max_memory_usage of one query (not the server's total or the user's, which others' queries fill):
  // "Query memory limit exceeded" since ClickHouse 24, "Memory limit (for query) exceeded" before.
  { code: 241, message: /query memory limit exceeded|memory limit \(for query\) exceeded/i },
];

/** ClickHouse error codes that mean "these values cannot be stored": the rows are at fault, not the warehouse. */
const DATA_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  25, // CANNOT_PARSE_ESCAPE_SEQUENCE
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  53, // TYPE_MISMATCH
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  131, // TOO_LARGE_STRING_SIZE
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  376, // CANNOT_PARSE_UUID
  407, // DECIMAL_OVERFLOW
  469, // VIOLATED_CONSTRAINT
  691, // UNKNOWN_ELEMENT_OF_ENUM
]);

export class WarehouseError extends Error {
  /** The ClickHouse error code, when the engine gave one. */
  readonly code: number | undefined;
  /** The HTTP status of an answer that was not the engine's (a proxy's 431, 413, …), when there was one. */
  readonly httpStatus: number | undefined;
  readonly retryable: boolean;
  /** The engine refused the values (not the statement): the rows are at fault. */
  readonly refusedData: boolean;
  /**
   * The engine refused the statement for its size (an insert spanning too many partitions, a query over
   * its memory limit): the same rows in smaller statements pass, waiting changes nothing.
   */
  readonly tooLarge: boolean;
  /** The engine's own message, which may quote data: never logged. Not enumerable. */
  declare readonly detail: string;
  constructor(
    message: string,
    options: {
      code?: number | undefined;
      httpStatus?: number | undefined;
      retryable?: boolean;
      detail?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WarehouseError';
    const detail = options.detail ?? message;
    const { code } = options;
    this.code = code;
    this.httpStatus = options.httpStatus;
    this.tooLarge =
      code !== undefined && SIZE_REFUSALS.some((r) => r.code === code && r.message.test(detail));
    this.retryable = options.retryable ?? (code !== undefined && !this.tooLarge && RETRYABLE_CODES.has(code));
    this.refusedData = !this.retryable && code !== undefined && DATA_CODES.has(code);
    Object.defineProperty(this, 'detail', { value: detail, enumerable: false });
  }
}

/**
 * A WarehouseError for an error the engine reported: the message names only the code and its name
 * (`ClickHouse error 27 (CANNOT_PARSE_INPUT_ASSERTION_FAILED)`); the engine's text goes to `detail`.
 */
export function engineError(engineMessage: string, code: number | undefined): WarehouseError {
  const name = /\(([A-Z][A-Z0-9_]+)\)\s*$/.exec(engineMessage.trim())?.[1];
  const summary =
    code === undefined ? 'ClickHouse error' : `ClickHouse error ${code}${name ? ` (${name})` : ''}`;
  return new WarehouseError(summary, { code, detail: engineMessage });
}

/** The warehouse could not be reached (connection refused, reset, timed out): always retryable. */
export class WarehouseUnavailableError extends WarehouseError {
  constructor(message: string, options: { code?: number; httpStatus?: number; cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'WarehouseUnavailableError';
  }
}

/**
 * The embedded warehouse's data directory is held by another process (chDB lets one process open a data
 * directory). Not retryable by waiting a moment: that process has to stop, or serve the queries itself.
 */
export class WarehouseLockedError extends WarehouseError {
  readonly dataDir: string;
  /** The process that holds the directory, when known. */
  readonly pid: number | undefined;
  constructor(
    dataDir: string,
    options: {
      pid?: number | undefined;
      cause?: unknown /** Appended to the message: what to do. */;
      note?: string;
    } = {},
  ) {
    super(
      `the embedded warehouse at ${dataDir} is in use by another process${options.pid ? ` (pid ${options.pid})` : ''} ` +
        `(chDB allows one process per data directory)${options.note ?? ''}`,
      { code: 76, retryable: false, cause: options.cause },
    );
    this.name = 'WarehouseLockedError';
    this.dataDir = dataDir;
    this.pid = options.pid;
  }
}

/**
 * An HTTP answer that is not a ClickHouse error (no `X-ClickHouse-Exception-Code`): something between
 * Tally and the engine answered, or the server refused the request before the engine saw it (a URL or
 * headers too long: 414, 431; a body too large: 413; a proxy's 400, 401, 403). A 5xx, 408 or 429 says
 * the warehouse is away or busy: an outage. Any other 4xx will be answered the same however long one
 * waits: the warehouse's failure (the consumers retry it with backoff and log it as an error, and set
 * nothing aside), never an outage. `body` may echo the request (its parameters): kept in `detail` only.
 */
export function httpAnswerError(status: number, body: string): WarehouseError {
  const message = `the warehouse answered HTTP ${status} without a ClickHouse error`;
  if (status >= 500 || status === 408 || status === 429) {
    return new WarehouseUnavailableError(message, { httpStatus: status });
  }
  return new WarehouseError(message, { httpStatus: status, retryable: false, detail: body || message });
}

/** Reads the ClickHouse code out of an engine message ("Code: 60. DB::Exception: …"). */
export function clickhouseCodeOf(message: string): number | undefined {
  const match = /Code: (\d+)\./.exec(message);
  return match ? Number(match[1]) : undefined;
}
