// Validation of ingest bodies and payloads against the contract's JSON Schemas, with messages that name
// the field path and what is wrong ("data.customer_id is required"). Used by the gateway and the SDKs.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ISO_4217_CODES } from './currencies.ts';
import { isExactMoney, MAX_MONEY, MONEY_DECIMALS, MONEY_SIGNIFICANT_DIGITS } from './money.ts';
import { COUNTRY_PATTERN, type IngestRecord } from './record.ts';
import {
  ENVELOPE_SCHEMAS,
  type IngestEnvelope,
  LIMITS,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  PAYLOAD_SCHEMAS,
  type PayloadByType,
  RECORD_TYPES,
  type RecordType,
  UUID_PATTERN,
} from './schemas.ts';

// ajv-formats is CommonJS; under ESM its default export may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const ajv = addFormats(
  new Ajv({
    allErrors: false,
    useDefaults: true, // currency defaults to USD
    coerceTypes: false,
    allowUnionTypes: true,
    strict: true,
  }),
);
// Money must be stored exactly: see money.ts.
ajv.addFormat('money', { type: 'number', validate: isExactMoney });

const envelopeValidators = Object.fromEntries(
  RECORD_TYPES.map((t) => [t, ajv.compile(ENVELOPE_SCHEMAS[t])]),
) as Record<RecordType, ValidateFunction>;
// Compiling the envelopes registered the payload schemas under their $id; reuse those validators.
const payloadValidators = Object.fromEntries(
  RECORD_TYPES.map((t) => [t, ajv.getSchema(PAYLOAD_SCHEMAS[t].$id as string)]),
) as Record<RecordType, ValidateFunction>;

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; message: string };

export const isRecordType = (value: unknown): value is RecordType =>
  typeof value === 'string' && (RECORD_TYPES as readonly string[]).includes(value);

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ACCEPTED_TYPES = RECORD_TYPES.join(', ');

/**
 * Validates a request body of POST /api/ingest. On success the body is returned with defaults applied
 * (currency USD) and the currency upper-cased; it is the same object, changed in place.
 */
export function validateIngest(body: unknown): ValidationResult<IngestEnvelope> {
  if (!isPlainObject(body)) return fail('body must be a JSON object');
  const { type } = body;
  if (type === undefined || type === null) return fail(`type is required (one of ${ACCEPTED_TYPES})`);
  if (!isRecordType(type)) return fail(`type must be one of ${ACCEPTED_TYPES}`);
  if (body.data === undefined || body.data === null) return fail('data is required');
  const validate = envelopeValidators[type];
  if (!validate(body)) return fail(describeError(validate.errors, ''));
  const valueError = malformedValue(body.data, 'data');
  if (valueError) return fail(valueError);
  const currencyError = normaliseCurrency(type, body.data as Record<string, unknown>, 'data.');
  if (currencyError) return fail(currencyError);
  return { ok: true, value: body as IngestEnvelope };
}

/**
 * Validates one payload (the `data` object) of the given type. `pathPrefix` is put before field names in
 * messages ("data." for an envelope's payload, "" for a bare payload as the revenue SDK takes it).
 */
export function validatePayload<T extends RecordType>(
  type: T,
  data: unknown,
  pathPrefix = '',
): ValidationResult<PayloadByType[T]> {
  const validate = payloadValidators[type];
  if (!validate(data)) return fail(describeError(validate.errors, pathPrefix));
  const valueError = malformedValue(data, pathPrefix.replace(/\.$/, ''));
  if (valueError) return fail(valueError);
  const currencyError = normaliseCurrency(type, data as Record<string, unknown>, pathPrefix);
  if (currencyError) return fail(currencyError);
  return { ok: true, value: data as PayloadByType[T] };
}

/**
 * Checks a record as the gateway appends it to the record log (its payload against the contract, its
 * envelope's times within the contract's bounds), for readers of the log that must not trust its writer:
 * a record appended by an older gateway, or by another producer on a Kafka topic.
 */
export function validateRecord(record: unknown): ValidationResult<IngestRecord> {
  if (!isPlainObject(record)) return fail('record must be an object');
  if (!isRecordType(record.type)) return fail(`type must be one of ${ACCEPTED_TYPES}`);
  if (typeof record.id !== 'string' || !UUID.test(record.id)) return fail('id must be a UUID');
  if (typeof record.project_id !== 'string' || record.project_id === '')
    return fail('project_id is required');
  for (const field of ['timestamp', 'received_at', 'client_timestamp'] as const) {
    const value = record[field];
    if (value === null && field === 'client_timestamp') continue;
    if (
      !Number.isInteger(value) ||
      (value as number) < MIN_TIMESTAMP_MS ||
      (value as number) >= MAX_TIMESTAMP_MS
    ) {
      return fail(`${field} must be whole milliseconds from 2000 to before 2100`);
    }
  }
  if (record.user_agent !== null && typeof record.user_agent !== 'string')
    return fail('user_agent must be a string');
  if (
    record.country !== undefined &&
    record.country !== null &&
    !(typeof record.country === 'string' && COUNTRY_PATTERN.test(record.country))
  )
    return fail('country must be an ISO 3166-1 alpha-2 code');
  for (const field of ['region', 'city'] as const) {
    const value = record[field];
    if (
      value !== undefined &&
      value !== null &&
      !(typeof value === 'string' && value.length >= 1 && value.length <= 200)
    )
      return fail(`${field} must be a name of 1 to 200 characters`);
  }
  const payload = validatePayload(record.type, record.data, 'data.');
  return payload.ok ? { ok: true, value: record as unknown as IngestRecord } : payload;
}

const UUID = new RegExp(UUID_PATTERN);

function normaliseCurrency(type: RecordType, data: Record<string, unknown>, prefix: string): string | null {
  if (type !== 'revenue' || typeof data.currency !== 'string') return null;
  const code = data.currency.toUpperCase();
  if (!ISO_4217_CODES.has(code)) return `${prefix}currency must be an ISO 4217 currency code`;
  data.currency = code;
  return null;
}

/** In a `u` regex a surrogate pair is one code point, so this matches only a lone surrogate. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The first value under `value` that the contract refuses wherever it is, as a message naming its path;
 * null if none. A string or key that is not well-formed Unicode (a lone UTF-16 surrogate, which JSON's \\u
 * escapes can carry but no UTF-8 text can hold). A number that is not finite: JSON has no Infinity, but
 * `1e309` parses to it and would be stored as null; NaN and Infinity reach validatePayload from code (the
 * revenue SDK). Integers beyond 2^53 are not refused: JSON numbers are IEEE-754 doubles (RFC 8259, 6),
 * stored as such (README, "Validation rules"). Iterative: the nesting depth is the caller's to bound.
 */
function malformedValue(value: unknown, path: string): string | null {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [current, at] = stack.pop() as [unknown, string];
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current))
        return `${at || 'body'} must be valid Unicode text (it has a lone surrogate)`;
    } else if (typeof current === 'number') {
      if (!Number.isFinite(current))
        return `${at || 'body'} must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)`;
    } else if (typeof current === 'object' && current !== null) {
      const array = Array.isArray(current);
      for (const [key, child] of Object.entries(current)) {
        const childPath = array ? `${at}[${key}]` : at ? `${at}.${key}` : key;
        if (!array && LONE_SURROGATE.test(key))
          return `${at || 'body'} has a key that is not valid Unicode text`;
        if (
          typeof child === 'string' ||
          typeof child === 'number' ||
          (typeof child === 'object' && child !== null)
        ) {
          stack.push([child, childPath]);
        }
      }
    }
  }
  return null;
}

const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

function describeError(errors: ErrorObject[] | null | undefined, pathPrefix: string): string {
  // An if/then/else failure reports the inner error first and the "if" wrapper after it.
  const error = errors?.find((e) => e.keyword !== 'if') ?? errors?.[0];
  if (!error) return 'body is invalid';
  const path = (pathPrefix + error.instancePath.slice(1).replaceAll('/', '.')).replace(/\.$/, '');
  const at = (field: string) => (path ? `${path}.${field}` : field);
  const params = error.params as Record<string, unknown>;
  if (error.propertyName !== undefined || error.keyword === 'propertyNames') {
    return `${path} has a key longer than ${LIMITS.mapKeyLength} characters`;
  }
  const field = path.slice(path.lastIndexOf('.') + 1);
  if (field === 'timestamp' && ['type', 'minimum', 'exclusiveMaximum'].includes(error.keyword)) {
    return error.keyword === 'minimum'
      ? `${path} must be milliseconds since the Unix epoch (got a time before the year 2000; seconds?)`
      : error.keyword === 'exclusiveMaximum'
        ? `${path} must be milliseconds since the Unix epoch before the year 2100 (${MAX_TIMESTAMP_MS})`
        : `${path} must be a whole number of milliseconds since the Unix epoch`;
  }
  if (
    (field === 'amount' || field === 'mrr_impact') &&
    ['format', 'minimum', 'maximum'].includes(error.keyword)
  ) {
    return error.keyword === 'format'
      ? `${path} must have at most ${MONEY_DECIMALS} decimal places and ${MONEY_SIGNIFICANT_DIGITS} significant digits (money is stored exactly)`
      : `${path} must be between -${MAX_MONEY} and ${MAX_MONEY}`;
  }
  switch (error.keyword) {
    case 'required':
      return `${at(String(params.missingProperty))} is required`;
    case 'type': {
      const types = String(params.type)
        .split(',')
        .filter((t) => t !== 'null');
      return `${path} must be ${types.map((t) => ARTICLE[t] ?? t).join(' or ')}`;
    }
    case 'minLength':
      return `${path} must not be empty`;
    case 'maxLength':
      return `${path} must be at most ${params.limit} characters long`;
    case 'maxProperties':
      return `${path || 'body'} must have at most ${params.limit} keys`;
    case 'enum':
      return `${path} must be one of ${(params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
    case 'exclusiveMinimum':
      return path.endsWith('amount')
        ? `${path} must be positive (zero or negative amounts are accepted only for event_type churn or refund)`
        : `${path} ${error.message}`;
    case 'pattern':
      return field === 'currency'
        ? `${path} must be an ISO 4217 currency code`
        : field === 'id'
          ? `${path} must be a UUID`
          : `${path} does not have the expected form`;
    case 'format':
      return `${path} must be a ${String(params.format).toUpperCase()}`;
    default:
      return `${path || 'body'} ${error.message ?? 'is invalid'}`;
  }
}
