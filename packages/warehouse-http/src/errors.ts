// ClickHouse's error shape on its HTTP interface: every failure is an exception with a numeric code and a
// name, answered with the HTTP status ClickHouse gives that code, the `X-ClickHouse-Exception-Code`
// header and the text `Code: N. DB::Exception: <message> (NAME) (version V)`. Errors this layer raises
// itself (before anything runs in the engine) are HttpInterfaceErrors; the engine's own errors carry their
// code in their message. The code → status table is ClickHouse's (src/Server/HTTP/exceptionCodeToHTTPStatus).

/** The codes this layer raises, by ClickHouse's names (a test checks them against the engine's table). */
export const CODES = {
  UNSUPPORTED_METHOD: 1,
  CANNOT_PARSE_TEXT: 6,
  THERE_IS_NO_COLUMN: 8,
  DUPLICATE_COLUMN: 15,
  CANNOT_PARSE_ESCAPE_SEQUENCE: 25,
  CANNOT_PARSE_QUOTED_STRING: 26,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27,
  BAD_ARGUMENTS: 36,
  UNKNOWN_ELEMENT_IN_AST: 37,
  CANNOT_PARSE_DATE: 38,
  CHECKSUM_DOESNT_MATCH: 40,
  CANNOT_PARSE_DATETIME: 41,
  ILLEGAL_COLUMN: 44,
  UNKNOWN_FUNCTION: 46,
  UNKNOWN_IDENTIFIER: 47,
  NOT_IMPLEMENTED: 48,
  UNKNOWN_TYPE: 50,
  TYPE_MISMATCH: 53,
  UNKNOWN_STORAGE: 56,
  UNKNOWN_TABLE: 60,
  SYNTAX_ERROR: 62,
  UNKNOWN_AGGREGATE_FUNCTION: 63,
  CANNOT_PARSE_NUMBER: 72,
  UNKNOWN_FORMAT: 73,
  CANNOT_OPEN_FILE: 76,
  UNKNOWN_TYPE_OF_QUERY: 78,
  UNKNOWN_DATABASE: 81,
  UNKNOWN_COMPRESSION_METHOD: 89,
  UNKNOWN_SETTING: 115,
  INCORRECT_DATA: 117,
  UNKNOWN_TYPE_OF_AST_NODE: 123,
  UNKNOWN_DIRECTION_OF_SORTING: 152,
  TIMEOUT_EXCEEDED: 159,
  READONLY: 164,
  TOO_DEEP_AST: 167,
  TOO_BIG_AST: 168,
  UNKNOWN_USER: 192,
  WRONG_PASSWORD: 193,
  REQUIRED_PASSWORD: 194,
  TOO_MANY_SIMULTANEOUS_QUERIES: 202,
  ABORTED: 236,
  SOCKET_TIMEOUT: 209,
  UNEXPECTED_AST_STRUCTURE: 223,
  QUERY_IS_TOO_LARGE: 229,
  CANNOT_DECOMPRESS: 271,
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: 321,
  UNKNOWN_DATABASE_ENGINE: 336,
  INTO_OUTFILE_NOT_ALLOWED: 358,
  SESSION_NOT_FOUND: 372,
  SESSION_IS_LOCKED: 373,
  INVALID_SESSION_TIMEOUT: 374,
  CANNOT_PARSE_UUID: 376,
  HTTP_LENGTH_REQUIRED: 381,
  CANNOT_COMPILE_REGEXP: 427,
  CANNOT_SCHEDULE_TASK: 439,
  CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING: 441,
  ACCESS_DENIED: 497,
  UNKNOWN_ROLE: 511,
  SET_NON_GRANTED_ROLE: 512,
  AUTHENTICATION_FAILED: 516,
  CANNOT_PARSE_IPV4: 675,
  CANNOT_PARSE_IPV6: 676,
  UNSUPPORTED_MEDIA_TYPE: 779,
  UNKNOWN_EXCEPTION: 1002,
} as const;

export type CodeName = keyof typeof CODES;

const NAME_OF = new Map<number, CodeName>(
  Object.entries(CODES).map(([name, code]) => [code, name as CodeName]),
);

const STATUS_GROUPS: [number, CodeName[]][] = [
  [401, ['REQUIRED_PASSWORD']],
  [403, ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED']],
  [
    400,
    [
      'BAD_ARGUMENTS',
      'CANNOT_COMPILE_REGEXP',
      'CANNOT_PARSE_TEXT',
      'CANNOT_PARSE_ESCAPE_SEQUENCE',
      'CANNOT_PARSE_QUOTED_STRING',
      'CANNOT_PARSE_DATE',
      'CANNOT_PARSE_DATETIME',
      'CANNOT_PARSE_NUMBER',
      'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
      'CANNOT_PARSE_IPV4',
      'CANNOT_PARSE_IPV6',
      'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
      'CANNOT_PARSE_UUID',
      'DUPLICATE_COLUMN',
      'ILLEGAL_COLUMN',
      'UNKNOWN_ELEMENT_IN_AST',
      'UNKNOWN_TYPE_OF_AST_NODE',
      'THERE_IS_NO_COLUMN',
      'TOO_DEEP_AST',
      'TOO_BIG_AST',
      'UNEXPECTED_AST_STRUCTURE',
      'SYNTAX_ERROR',
      'INCORRECT_DATA',
      'TYPE_MISMATCH',
      'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ],
  ],
  [
    404,
    [
      'UNKNOWN_TABLE',
      'UNKNOWN_FUNCTION',
      'UNKNOWN_IDENTIFIER',
      'UNKNOWN_TYPE',
      'UNKNOWN_STORAGE',
      'UNKNOWN_DATABASE',
      'UNKNOWN_SETTING',
      'UNKNOWN_DIRECTION_OF_SORTING',
      'UNKNOWN_AGGREGATE_FUNCTION',
      'UNKNOWN_FORMAT',
      'UNKNOWN_DATABASE_ENGINE',
      'UNKNOWN_TYPE_OF_QUERY',
      'UNKNOWN_ROLE',
    ],
  ],
  [413, ['QUERY_IS_TOO_LARGE']],
  [501, ['NOT_IMPLEMENTED']],
  [503, ['SOCKET_TIMEOUT', 'CANNOT_OPEN_FILE', 'CANNOT_SCHEDULE_TASK', 'ABORTED']],
  [411, ['HTTP_LENGTH_REQUIRED']],
  [408, ['TIMEOUT_EXCEEDED']],
  [415, ['UNSUPPORTED_MEDIA_TYPE']],
];

const STATUS_OF = new Map<number, number>(
  STATUS_GROUPS.flatMap(([status, names]) => names.map((name) => [CODES[name], status] as [number, number])),
);

/** The HTTP status ClickHouse answers an exception code with (500 for any code it does not list). */
export function httpStatusOf(code: number): number {
  return STATUS_OF.get(code) ?? 500;
}

/** A failure this layer detects itself, before anything runs (or that it maps an engine failure to). */
export class HttpInterfaceError extends Error {
  readonly code: number;
  constructor(name: CodeName, message: string, options?: { cause?: unknown }) {
    super(`${message} (${name})`, options);
    this.name = 'HttpInterfaceError';
    this.code = CODES[name];
  }
}

/**
 * The code and message of any failure: ours, or the engine's (chDB's errors carry `clickhouseCode` and a
 * message "Code: N. DB::Exception: …", sometimes nested twice and with a version trailer, which are taken
 * off so that the answer carries them once). Anything else is an internal error whose details stay in the
 * log: the message is generic.
 */
export function exceptionOf(error: unknown): { code: number; message: string; internal: boolean } {
  if (error instanceof HttpInterfaceError)
    return { code: error.code, message: error.message, internal: false };
  const raw = String((error as Error | undefined)?.message ?? '');
  const fromMessage = /Code: (\d+)\./.exec(raw);
  const code = (error as { clickhouseCode?: number } | undefined)?.clickhouseCode ?? Number(fromMessage?.[1]);
  if (!code || Number.isNaN(code)) {
    return { code: CODES.UNKNOWN_EXCEPTION, message: 'Internal error (UNKNOWN_EXCEPTION)', internal: true };
  }
  let message = raw.replace(/^Query failed:\s*/, '');
  for (let i = 0; i < 3; i++) message = message.replace(/^\s*Code: \d+\. DB::(?:Errno)?Exception: /, '');
  message = message
    .replace(/ \(version [^)]*\)\.?/g, '')
    .replace(/(\([A-Z0-9_]+\))\. \1$/, '$1')
    .trim();
  const name = NAME_OF.get(code);
  if (name && !message.endsWith(`(${name})`)) message = `${message} (${name})`;
  return { code, message, internal: false };
}

/** The body ClickHouse answers an exception with. */
export function exceptionText(code: number, message: string, version: string): string {
  return `Code: ${code}. DB::Exception: ${message} (version ${version})\n`;
}
