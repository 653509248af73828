// What each user of the HTTP interface may run, decided from the engine's own parse of the statement, not
// from a scan of its text. chDB runs as clickhouse-local, which has no grants: `file()`, `url()`, the
// File and URL engines, `INTO OUTFILE` and dictionaries with a FILE source all reach the host, and its
// `readonly=1` does not stop the scalar `file()`. So before a statement runs, on the connection it will run
// on (with the same settings, so the same parser), the executor asks the engine:
//   1. `formatQuery(<the statement as a string literal>)`: the engine parses it, refuses several statements,
//      and gives it back in its canonical text (standard quoting, no comments, no heredocs);
//   2. `EXPLAIN AST <that canonical text>`: the tree the engine would execute.
// This file checks that tree (read by the warehouse's parseAstDump) against allow-lists (checkStatement):
// the kinds of statement a user may run, every function call by where it stands (a table function in FROM,
// a table or database engine, a column codec or index type, any other call), and every setting a
// statement, the URL or a session changes. Anything not on a list is refused; an unexpected shape of the
// tree is refused too. The function allow-list is the engine's own catalog (`system.functions`) restricted
// to the documentation categories that only compute on values, plus aggregate combinators of allowed
// aggregates.
import type { AstNode } from '@tally/warehouse';
import { HttpInterfaceError } from './errors.ts';
import { type Token, tokens } from './statement.ts';

/** Documentation categories of `system.functions` whose functions only compute on the values given. */
const COMPUTING_CATEGORIES = new Set([
  'Aggregate Functions',
  'Arithmetic',
  'Arrays',
  'Bit',
  'Bitmap',
  'Comparison',
  'Conditional',
  'Dates and Times',
  'Distance',
  'Encoding',
  'Encryption',
  'Financial',
  'Geo',
  'Geo Polygon',
  'Hash',
  'IP Address',
  'Internal',
  'JSON',
  'Logical',
  'Map',
  'Mathematical',
  'Null',
  'NumericIndexedVector',
  'QBit',
  'Random Number',
  'Rounding',
  'String',
  'String Replacement',
  'String Search',
  'String Splitting',
  'Time Series',
  'Time Window',
  'Tuple',
  'Type Conversion',
  'URL',
  'UUID',
  'Dictionary',
]);

/**
 * Of the category "Other" (which also holds `file`, `getServerSetting`, `catboostEvaluate`, …), the
 * functions that only compute on values or tell about the query and the engine's version.
 */
const ALLOWED_OTHER = new Set([
  'bar',
  'blockNumber',
  'blockSerializedSize',
  'blockSize',
  'byteSize',
  'colorOKLABToSRGB',
  'colorOKLCHToSRGB',
  'colorSRGBToOKLAB',
  'colorSRGBToOKLCH',
  'countDigits',
  'currentDatabase',
  'currentQueryID',
  'currentSchemas',
  'currentUser',
  'defaultValueOfArgumentType',
  'defaultValueOfTypeName',
  'digits',
  'dumpColumnStructure',
  'errorCodeToName',
  'finalizeAggregation',
  'formatQuery',
  'formatQueryOrNull',
  'formatQuerySingleLine',
  'formatQuerySingleLineOrNull',
  'formatReadableDecimalSize',
  'formatReadableQuantity',
  'formatReadableSize',
  'formatReadableTimeDelta',
  'getSetting',
  'getSettingOrDefault',
  'getSizeOfEnumType',
  'getSubcolumn',
  'getTypeSerializationStreams',
  'hasColumnInTable',
  'identity',
  'ignore',
  'indexHint',
  'initializeAggregation',
  'initialQueryID',
  'initialQueryStartTime',
  'isConstant',
  'isDecimalOverflow',
  'joinGet',
  'joinGetOrNull',
  'lowCardinalityIndices',
  'lowCardinalityKeys',
  'MACNumToString',
  'MACStringToNum',
  'MACStringToOUI',
  'materialize',
  'minSampleSizeContinuous',
  'minSampleSizeConversion',
  'neighbor',
  'normalizedQueryHash',
  'normalizedQueryHashKeepNames',
  'normalizeQuery',
  'normalizeQueryKeepNames',
  'parseReadableSize',
  'parseReadableSizeOrNull',
  'parseReadableSizeOrZero',
  'parseTimeDelta',
  'partitionId',
  'queryID',
  'revision',
  'rowNumberInAllBlocks',
  'rowNumberInBlock',
  'runningAccumulate',
  'runningDifference',
  'runningDifferenceStartingWithFirstValue',
  'sleep',
  'throwIf',
  'toColumnTypeName',
  'toTypeName',
  'transform',
  'uptime',
  'variantElement',
  'variantType',
  'version',
  'visibleWidth',
]);

/** Calls the parser makes of syntax (lambdas, `x.1`, `[…]`), which the catalog does not list. */
const SYNTAX_FUNCTIONS = new Set(['lambda', 'tuple', 'array', 'arrayElement', 'tupleElement', 'exists']);

/** Table functions (`FROM f(…)`) that make rows from their arguments or read this warehouse's own tables. */
const TABLE_FUNCTIONS = new Set([
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'generate_series',
  'generateSeries',
  'primes',
  'generateRandom',
  'values',
  'null',
  'view',
  'merge',
  'format',
]);

/** Table and database engines a writer may create: data kept in the warehouse's own directory. */
const ENGINES = new Set([
  'MergeTree',
  'ReplacingMergeTree',
  'SummingMergeTree',
  'AggregatingMergeTree',
  'CollapsingMergeTree',
  'VersionedCollapsingMergeTree',
  'CoalescingMergeTree',
  'ReplicatedMergeTree',
  'ReplicatedReplacingMergeTree',
  'ReplicatedSummingMergeTree',
  'ReplicatedAggregatingMergeTree',
  'ReplicatedCollapsingMergeTree',
  'ReplicatedVersionedCollapsingMergeTree',
  'Memory',
  'Null',
  'Log',
  'TinyLog',
  'StripeLog',
  'Set',
  'Join',
  'Buffer',
  'Merge',
  'Atomic',
]);

/** What column declarations and data-skipping indexes call (codecs, index types), in DDL only. */
const DDL_NAMES = new Set([
  'CODEC',
  'NONE',
  'LZ4',
  'LZ4HC',
  'ZSTD',
  'Delta',
  'DoubleDelta',
  'Gorilla',
  'FPC',
  'T64',
  'GCD',
  'minmax',
  'set',
  'bloom_filter',
  'ngrambf_v1',
  'tokenbf_v1',
]);

/** Statements a read-only user may run (the engine's readonly=1 refuses writes among them too). */
const READ_STATEMENTS = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'ShowTables',
  'ShowColumns',
  'ShowFunctions',
  'ShowEngineQuery',
  'ShowProcesslistQuery',
  'ShowCreateTableQuery',
  'ShowCreateDatabaseQuery',
  'ShowCreateViewQuery',
  'ShowCreateDictionaryQuery',
  'DescribeQuery',
  'ExistsTableQuery',
  'ExistsDatabaseQuery',
  'ExistsViewQuery',
  'ExistsDictionaryQuery',
  'Explain',
  'UseQuery',
  'Set',
]);

/** What a writer may run besides: data and the warehouse's own tables, and ending a query. */
const WRITE_STATEMENTS = new Set([
  ...READ_STATEMENTS,
  'InsertQuery',
  'CreateQuery',
  'AlterQuery',
  'DropQuery',
  'TruncateQuery',
  'OptimizeQuery',
  'Rename',
  'DeleteQuery',
  'UpdateQuery',
  'CheckQuery',
  'KillQueryQuery',
]);

/**
 * Settings no user of the interface may change (by URL, SET, a SETTINGS clause or a table's SETTINGS):
 * the ones that name a file, a directory, a disk or a remote endpoint, or change how a statement is
 * parsed or how INSERT data is evaluated, and the ones the server sets itself (the user's limits).
 */
const SETTING_REACHES_HOST =
  /(^|_)(disk|storage_policy|path|url|uri|endpoint|schema_registry|errors_file|format_schema|format_template|outfile)($|_)/i;
const SERVER_SETTINGS = new Set([
  'readonly',
  'allow_ddl',
  'dialect',
  'implicit_select',
  'allow_introspection_functions',
  'input_format_values_interpret_expressions',
  'input_format_values_deduce_templates_of_expressions',
  'log_comment',
]);

/** The engine's function catalog, as read from `system.functions` when the interface starts. */
export interface FunctionCatalog {
  /** Names (exact case) of the functions an HTTP user may call. */
  allowed: ReadonlySet<string>;
  /** Lower-case names of allowed case-insensitive functions (`COUNT`, `Sum`). */
  allowedAnyCase: ReadonlySet<string>;
  /** Allowed aggregate functions, for names built with combinators (`sumIf`, `uniqExactStateOrNull`). */
  aggregates: ReadonlySet<string>;
  /** The combinator suffixes (`If`, `State`, `OrNull`, …), longest first. */
  combinators: readonly string[];
}

export interface CatalogRow {
  name: string;
  is_aggregate: number | boolean;
  case_insensitive: number | boolean;
  alias_to: string;
  categories: string;
}

/** The allow-list from the engine's catalog: functions of the computing categories (aliases by their target). */
export function functionCatalog(
  rows: readonly CatalogRow[],
  combinators: readonly string[],
): FunctionCatalog {
  const byName = new Map(rows.map((row) => [row.name, row]));
  const permitted = (row: CatalogRow): boolean => {
    const target = row.alias_to ? (byName.get(row.alias_to) ?? row) : row;
    if (ALLOWED_OTHER.has(target.name)) return true;
    return target.categories
      .split(',')
      .map((c) => c.trim())
      .some((c) => COMPUTING_CATEGORIES.has(c));
  };
  const allowed = new Set<string>(SYNTAX_FUNCTIONS);
  const allowedAnyCase = new Set<string>();
  const aggregates = new Set<string>();
  for (const row of rows) {
    if (!permitted(row)) continue;
    allowed.add(row.name);
    if (Number(row.case_insensitive)) allowedAnyCase.add(row.name.toLowerCase());
    if (Number(row.is_aggregate)) aggregates.add(row.name);
  }
  return {
    allowed,
    allowedAnyCase,
    aggregates,
    combinators: [...combinators].sort((a, b) => b.length - a.length),
  };
}

function isAllowedFunction(catalog: FunctionCatalog, name: string): boolean {
  if (catalog.allowed.has(name) || catalog.allowedAnyCase.has(name.toLowerCase())) return true;
  // sumIf, uniqExactStateOrNull, quantilesArrayMerge: an allowed aggregate with combinator suffixes.
  let base = name;
  for (let stripped = true; stripped && base.length > 0; ) {
    stripped = false;
    for (const suffix of catalog.combinators) {
      if (base.length > suffix.length && base.endsWith(suffix)) {
        base = base.slice(0, -suffix.length);
        stripped = true;
        if (catalog.aggregates.has(base)) return true;
        break;
      }
    }
  }
  return false;
}

export interface StatementSubject {
  /** The user's name, for the messages. */
  user: string;
  /** Read-only users run READ_STATEMENTS only. */
  readonly: boolean;
  /** The file an INSERT's data was spooled to: the only FROM INFILE allowed. */
  spoolFile?: string | undefined;
  /** Settings the server sets for this user (its limits, by name), which it may lower but not raise. */
  limits: ReadonlyMap<string, number>;
}

const denied = (subject: StatementSubject, what: string) =>
  new HttpInterfaceError('ACCESS_DENIED', `${subject.user}: Not enough privileges. ${what}`);

/** Every node of the tree with its parent. */
function* walk(node: AstNode, parent: AstNode | null = null): Generator<[AstNode, AstNode | null]> {
  yield [node, parent];
  for (const child of node.children) yield* walk(child, node);
}

/**
 * Refuses (ACCESS_DENIED, READONLY for a read-only user's write) what `subject` may not run: checked against the engine's tree of the statement
 * and its canonical text. Returns normally when every part of it is on the user's lists.
 */
export function checkStatement(
  catalog: FunctionCatalog,
  subject: StatementSubject,
  root: AstNode | null,
  canonical: string,
): void {
  if (!root) throw denied(subject, 'The statement could not be read.');
  if (subject.readonly && WRITE_STATEMENTS.has(root.type) && !READ_STATEMENTS.has(root.type)) {
    // What a ClickHouse server answers a readonly=1 user.
    throw new HttpInterfaceError('READONLY', `${subject.user}: Cannot execute query in readonly mode.`);
  }
  if (!WRITE_STATEMENTS.has(root.type)) throw denied(subject, `This interface may not run ${root.type}.`);
  for (const [node, parent] of walk(root)) {
    switch (node.type) {
      case 'Function': {
        const name = node.name;
        const within = parent?.type ?? '';
        if (parent?.line.startsWith('Storage definition') && parent.children[0] === node) {
          if (!ENGINES.has(name)) throw denied(subject, `The engine ${name} is not allowed over HTTP.`);
        } else if (within === 'TableExpression') {
          if (!TABLE_FUNCTIONS.has(name)) {
            throw denied(
              subject,
              `${name}() reads the server's files or network, or is not allowed over HTTP.`,
            );
          }
        } else if (within === 'InsertQuery') {
          throw denied(subject, `INSERT INTO FUNCTION ${name}() is not allowed over HTTP.`);
        } else if (!isAllowedFunction(catalog, name) && !(!subject.readonly && DDL_NAMES.has(name))) {
          throw denied(
            subject,
            `${name}() reads the server's files or network, or is not allowed over HTTP.`,
          );
        }
        break;
      }
      case 'FunctionWithKeyValueArguments':
      case 'Dictionary':
        throw denied(subject, 'Dictionaries are not allowed over HTTP.');
      case 'Literal':
        // A literal straight under a statement with output is its INTO OUTFILE, under an INSERT its FROM
        // INFILE (the interface's own spool file, nothing else).
        if (parent === root && (READ_STATEMENTS.has(root.type) || root.type === 'InsertQuery')) {
          if (root.type !== 'InsertQuery' || node.line !== `Literal '${subject.spoolFile}'`) throw hostFile();
        }
        break;
    }
  }
  const canonicalTokens = [...tokens(Buffer.from(canonical))];
  canonicalTokens.forEach((token, i) => {
    const next = canonicalTokens[i + 1];
    const pair = `${token.type === 'word' ? token.text.toUpperCase() : ''} ${next?.type === 'word' ? next.text.toUpperCase() : ''}`;
    if (pair === 'INTO OUTFILE') throw hostFile();
    if (pair === 'FROM INFILE') {
      const file = canonicalTokens[i + 2];
      if (root.type !== 'InsertQuery' || file?.type !== 'string' || file.text !== subject.spoolFile)
        throw hostFile();
    }
  });
  for (const [name, value] of settingsNamed(canonicalTokens)) checkSetting(subject, name, value);
}

const hostFile = () =>
  new HttpInterfaceError(
    'INTO_OUTFILE_NOT_ALLOWED',
    "INTO OUTFILE and FROM INFILE are not allowed over the HTTP interface (they would use the server's files)",
  );

/**
 * Refuses a setting the user may not change: the server's own, and the user's limits, which it may only
 * lower (a whole number above 0 and at most the limit, as a ClickHouse server's settings constraints allow).
 */
export function checkSetting(
  subject: { user: string; limits: ReadonlyMap<string, number> },
  name: string,
  value: string | null,
): void {
  const lower = name.toLowerCase();
  const limit = subject.limits.get(lower);
  const lowered =
    limit !== undefined &&
    value !== null &&
    /^\d+$/.test(value) &&
    Number(value) > 0 &&
    Number(value) <= limit;
  if (SERVER_SETTINGS.has(lower) || SETTING_REACHES_HOST.test(name) || (limit !== undefined && !lowered)) {
    throw new HttpInterfaceError(
      'ACCESS_DENIED',
      `${subject.user}: Not enough privileges. The setting ${name.slice(0, 100)} is set by the server and cannot be changed over HTTP.`,
    );
  }
}

/**
 * The settings a statement's canonical text changes (`SET a = …`, and every `SETTINGS`/`SETTING` clause),
 * each with its value when the value is a plain number (null otherwise).
 */
export function settingsNamed(list: readonly Token[]): [string, string | null][] {
  const names: [string, string | null][] = [];
  for (let i = 0; i < list.length; i++) {
    const token = list[i] as Token;
    const word = token.type === 'word' ? token.text.toUpperCase() : '';
    const startsList = (word === 'SET' && i === 0) || word === 'SETTINGS' || word === 'SETTING';
    if (!startsList) continue;
    // name = value [, name = value]…, a value being one token, a signed number, or a call with its parentheses.
    let j = i + 1;
    if (list[j]?.text === '(') j++; // a column's SETTINGS (…)
    while (j + 1 < list.length && list[j + 1]?.text === '=') {
      const name = (list[j] as Token).text;
      j += 2;
      const signed = list[j]?.text === '-' || list[j]?.text === '+';
      if (signed) j++;
      const value = list[j];
      names.push([
        name,
        !signed && value?.type === 'number' && list[j + 1]?.text !== '(' ? value.text : null,
      ]);
      const depth = value?.depth ?? 0;
      j++;
      if (list[j]?.text === '(' || list[j]?.text === '[') {
        while (j < list.length && !((list[j]?.depth ?? 0) <= depth && /[)\]]/.test(list[j]?.text ?? ''))) j++;
        j++;
      }
      if (list[j]?.text !== ',') break;
      j++;
    }
    i = j - 1;
  }
  return names;
}
