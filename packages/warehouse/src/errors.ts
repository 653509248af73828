// Typed warehouse errors. Each says whether retrying the same operation may succeed, so the consumers'
// batch loop knows whether to back off and retry (network, overload) or to stop loudly (bad SQL, schema).

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

export class WarehouseError extends Error {
  /** The ClickHouse error code, when the engine gave one. */
  readonly code: number | undefined;
  readonly retryable: boolean;
  constructor(message: string, options: { code?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'WarehouseError';
    this.code = options.code;
    this.retryable = options.retryable ?? (options.code !== undefined && RETRYABLE_CODES.has(options.code));
  }
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
