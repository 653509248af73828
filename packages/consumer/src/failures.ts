// What a consumer does when landing fails, decided by the error: an outage (the warehouse unreachable,
// overloaded, timing out) is retried with the same batch and never sets a record aside; a failure caused by
// the records (the engine refused their values, a record breaks the contract or cannot be turned into a
// row) is narrowed down to the records at fault, which are set aside; a batch the engine refused for its
// size (an insert spanning more partitions than it takes) is landed in halves, and none of its records is
// at fault; any other failure of the warehouse (a missing table, a refused statement, a lost permission, an
// HTTP 4xx from something in front of it) is the warehouse's, not the records': it is retried with backoff
// and logged as an error until someone mends the warehouse, and nothing is set aside.
import { WarehouseError } from '@tally/warehouse';

/** A record the consumer cannot land because of the record itself; its message may quote the record. */
export class RecordError extends Error {
  /** The short code the dead letter gets (`contract`, `row`, …). */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'RecordError';
    this.code = code;
  }
}

/**
 * outage: retried as it is. records: narrowed down to the records at fault, set aside. too-large: landed in
 * halves (a single record refused so is the warehouse's failure). warehouse: retried with backoff.
 */
export type FailureKind = 'outage' | 'records' | 'too-large' | 'warehouse';

export function failureKind(error: unknown): FailureKind {
  if (error instanceof WarehouseError) {
    if (error.retryable) return 'outage';
    if (error.tooLarge) return 'too-large';
    return error.refusedData ? 'records' : 'warehouse';
  }
  if ((error as { retryable?: unknown })?.retryable === true) return 'outage';
  // Anything else was thrown by our own code while turning these records into rows: they are at fault
  // (and once the code is mended, the dead letters can be replayed).
  return 'records';
}

/** The dead letter's code and full text for an error: the text may quote the record, the code never does. */
export function describeForDeadLetter(error: unknown): { error_code: string; error: string } {
  if (error instanceof WarehouseError) {
    return { error_code: `warehouse-${error.code ?? 'error'}`, error: error.detail };
  }
  if (error instanceof RecordError) return { error_code: error.code, error: error.message };
  const name = (error as Error)?.name ?? 'Error';
  return { error_code: `error-${name}`, error: String((error as Error)?.message ?? error) };
}

/**
 * What a log line may say of an error: its kind, class and ClickHouse code, and the message only of a
 * WarehouseError (which never quotes data, see @tally/warehouse's errors). Never a record's values.
 */
export function describeForLog(error: unknown): Record<string, string | number | boolean> {
  const described: Record<string, string | number | boolean> = {
    error: (error as Error)?.name ?? typeof error,
    kind: failureKind(error),
  };
  if (error instanceof WarehouseError) {
    described.message = error.message;
    if (error.code !== undefined) described.code = error.code;
    if (error.httpStatus !== undefined) described.http_status = error.httpStatus;
  } else if (error instanceof RecordError) {
    described.code = error.code;
  }
  return described;
}
