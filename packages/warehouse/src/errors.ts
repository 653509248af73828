// Typed warehouse errors. Each says whether retrying the same operation may succeed (network, overload)
// and whether the engine refused the data itself (a value it cannot parse or store, a constraint), so the
// consumers know whether to retry, or to find the rows at fault and set them aside. The engine's own
// message can quote the rows of an insert or the parameters of a query: it is kept in `detail` (not
// enumerable, not a `cause`), for the dead-letter store and the CLI, and never in `message`, which logs get.

/** ClickHouse error codes that mean "try again later" rather than "this statement is wrong". */
const RETRYABLE_CODES = new Set([
  3, // UNEXPECTED_END_OF_FILE (connection cut mid-response)
  159, // TIMEOUT_EXCEEDED
  164, // READONLY (a replica in read-only mode while it recovers)
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY
  252, // TOO_MANY_PARTS
  319, // UNKNOWN_STATUS_OF_INSERT
  425, // SYSTEM_ERROR
  999, // KEEPER_EXCEPTION
]);

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
  readonly retryable: boolean;
  /** The engine refused the values (not the statement): the rows are at fault. */
  readonly refusedData: boolean;
  /** The engine's own message, which may quote data: never logged. Not enumerable. */
  declare readonly detail: string;
  constructor(
    message: string,
    options: { code?: number | undefined; retryable?: boolean; detail?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WarehouseError';
    this.code = options.code;
    this.retryable = options.retryable ?? (options.code !== undefined && RETRYABLE_CODES.has(options.code));
    this.refusedData = !this.retryable && options.code !== undefined && DATA_CODES.has(options.code);
    Object.defineProperty(this, 'detail', { value: options.detail ?? message, enumerable: false });
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
  constructor(message: string, options: { code?: number; cause?: unknown } = {}) {
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
  constructor(dataDir: string, options: { pid?: number | undefined; cause?: unknown } = {}) {
    super(
      `the embedded warehouse at ${dataDir} is in use by another process${options.pid ? ` (pid ${options.pid})` : ''} ` +
        '(chDB allows one process per data directory)',
      { code: 76, retryable: false, cause: options.cause },
    );
    this.name = 'WarehouseLockedError';
    this.dataDir = dataDir;
    this.pid = options.pid;
  }
}

/** Reads the ClickHouse code out of an engine message ("Code: 60. DB::Exception: …"). */
export function clickhouseCodeOf(message: string): number | undefined {
  const match = /Code: (\d+)\./.exec(message);
  return match ? Number(match[1]) : undefined;
}
