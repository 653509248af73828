// What this layer must know about a statement's text to carry it: its kind (first keyword), the FORMAT of
// its result, whether it is one statement (ClickHouse's HTTP interface refuses several), and where the data
// of an INSERT begins (after `FORMAT <name>` and the line break, or at `VALUES`: ClickHouse's rule). Read by
// a small tokenizer (strings, heredocs, quoted identifiers and comments skipped, so a keyword inside them
// does not count). What a statement may do is NOT decided here: statement-policy.ts decides it from the
// engine's own parse.
import { HttpInterfaceError } from './errors.ts';

export interface Statement {
  /** The first keyword, upper case (SELECT, INSERT, SET, USE, …); '' for an empty statement. */
  kind: string;
  /** The SQL text: the whole statement, or for an INSERT with data, up to the data. */
  sql: string;
  /** The data of an INSERT (bytes after FORMAT <name> or from VALUES on), or null. */
  data: Buffer | null;
  /** For an INSERT with data: its text before the SETTINGS clause (if any) and the FORMAT/VALUES. */
  insertHead: string;
  /** For an INSERT with data: its SETTINGS clause, or ''. */
  insertSettings: string;
  /** The name in a top-level FORMAT clause (the result's format, or the INSERT data's). */
  format: string | null;
  /** An INSERT whose rows come from a SELECT (with data after it: the input() form). */
  insertSelect: boolean;
}

const isSpace = (c: number) =>
  c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c || c === 0x0b;
const isWordStart = (c: number) =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c >= 0x80;
const isWord = (c: number) => isWordStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x24;

export interface Token {
  type: 'word' | 'quoted' | 'string' | 'number' | 'punct';
  text: string;
  start: number;
  end: number;
  depth: number;
}

/** A heredoc's opening delimiter at `i` (`$$` or `$tag$`), or null. */
function heredocTag(buffer: Buffer, i: number): string | null {
  let j = i + 1;
  while (j < buffer.length && isWord(buffer[j] as number) && buffer[j] !== 0x24) j++;
  return buffer[j] === 0x24 ? buffer.toString('latin1', i, j + 1) : null;
}

/** The tokens of `buffer`, each with its nesting depth in () and []. */
export function* tokens(buffer: Buffer): Generator<Token> {
  let i = 0;
  let depth = 0;
  const n = buffer.length;
  while (i < n) {
    const c = buffer[i] as number;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === 0x2d && buffer[i + 1] === 0x2d) {
      while (i < n && buffer[i] !== 0x0a) i++;
      continue;
    }
    if (c === 0x23 && (buffer[i + 1] === 0x20 || buffer[i + 1] === 0x21)) {
      while (i < n && buffer[i] !== 0x0a) i++;
      continue;
    }
    if (c === 0x2f && buffer[i + 1] === 0x2a) {
      let nesting = 1;
      i += 2;
      while (i < n && nesting > 0) {
        if (buffer[i] === 0x2f && buffer[i + 1] === 0x2a) {
          nesting++;
          i += 2;
        } else if (buffer[i] === 0x2a && buffer[i + 1] === 0x2f) {
          nesting--;
          i += 2;
        } else i++;
      }
      continue;
    }
    const start = i;
    if (c === 0x27 || c === 0x22 || c === 0x60) {
      i++;
      while (i < n) {
        const d = buffer[i] as number;
        if (d === 0x5c) i += 2;
        else if (d === c) {
          if (buffer[i + 1] === c) i += 2;
          else {
            i++;
            break;
          }
        } else i++;
      }
      const inner = buffer.toString('utf8', start + 1, Math.max(start + 1, i - 1));
      yield { type: c === 0x27 ? 'string' : 'quoted', text: inner, start, end: i, depth };
      continue;
    }
    const tag = c === 0x24 ? heredocTag(buffer, i) : null;
    if (tag !== null) {
      // $$…$$ or $tag$…$tag$: a string literal, up to the same delimiter (or the end).
      const close = buffer.indexOf(tag, i + tag.length, 'latin1');
      i = close < 0 ? n : close + tag.length;
      const inner = buffer.toString('utf8', start + tag.length, close < 0 ? n : close);
      yield { type: 'string', text: inner, start, end: i, depth };
      continue;
    }
    if (isWordStart(c)) {
      while (i < n && isWord(buffer[i] as number)) i++;
      yield { type: 'word', text: buffer.toString('utf8', start, i), start, end: i, depth };
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      while (i < n && (isWord(buffer[i] as number) || buffer[i] === 0x2e)) i++;
      yield { type: 'number', text: buffer.toString('latin1', start, i), start, end: i, depth };
      continue;
    }
    if (c === 0x28 || c === 0x5b) depth++;
    if (c === 0x29 || c === 0x5d) depth = Math.max(0, depth - 1);
    i++;
    yield { type: 'punct', text: String.fromCharCode(c), start, end: i, depth };
  }
}

/** Where INSERT data starts after `FORMAT <name>`: blanks up to and including one line break are skipped. */
function dataStartAfterFormat(buffer: Buffer, from: number): number {
  let i = from;
  while (i < buffer.length && (buffer[i] === 0x20 || buffer[i] === 0x09 || buffer[i] === 0x0d)) i++;
  if (buffer[i] === 0x0a) i++;
  return i;
}

/** Words after which FORMAT is a name (a column or table called `format`), not the FORMAT clause. */
const NOT_BEFORE_FORMAT_CLAUSE = new Set([
  'SELECT',
  'INTO',
  'TABLE',
  'FROM',
  'JOIN',
  'AS',
  'BY',
  ',',
  '.',
  '(',
]);

export function scanStatement(buffer: Buffer): Statement {
  const statement: Statement = {
    kind: '',
    sql: '',
    data: null,
    insertHead: '',
    insertSettings: '',
    format: null,
    insertSelect: false,
  };
  const recent: Token[] = [];
  let settingsAt: number | null = null;
  const splitInsert = (clauseStart: number) => {
    statement.insertHead = buffer.toString('utf8', 0, settingsAt ?? clauseStart).trimEnd();
    statement.insertSettings =
      settingsAt === null ? '' : buffer.toString('utf8', settingsAt, clauseStart).trim();
  };
  let end = buffer.length;
  let ended = false;
  for (const token of tokens(buffer)) {
    if (ended) {
      throw new HttpInterfaceError(
        'SYNTAX_ERROR',
        `Syntax error (Multi-statements are not allowed): failed at position ${token.start + 1}: end of query`,
      );
    }
    const word = token.type === 'word' ? token.text.toUpperCase() : '';
    const previous = recent.at(-1);
    const beforePrevious = recent.at(-2);
    recent.push(token);
    if (recent.length > 2) recent.shift();
    if (!statement.kind) {
      if (token.type === 'punct' && token.text === '(') continue;
      statement.kind = word || token.text;
    }
    if (token.depth !== 0) continue;
    if (token.type === 'punct' && token.text === ';') {
      end = token.start;
      ended = true;
      continue;
    }
    const last = previous?.type === 'word' ? previous.text.toUpperCase() : '';
    const formatClause =
      last === 'FORMAT' &&
      (token.type === 'word' || token.type === 'quoted') &&
      !NOT_BEFORE_FORMAT_CLAUSE.has(
        beforePrevious?.type === 'word' ? beforePrevious.text.toUpperCase() : (beforePrevious?.text ?? ''),
      );
    if (formatClause) {
      statement.format = token.text;
      if (statement.kind === 'INSERT') {
        statement.sql = buffer.toString('utf8', 0, token.end);
        const data = buffer.subarray(dataStartAfterFormat(buffer, token.end));
        statement.data = statement.insertSelect && data.length === 0 ? null : data;
        splitInsert((previous as Token).start);
        return statement;
      }
    }
    if (statement.kind !== 'INSERT') continue;
    if (word === 'SELECT' || word === 'WITH') statement.insertSelect = true;
    if (word === 'SETTINGS' && !statement.insertSelect) settingsAt = token.start;
    if (word === 'VALUES' && !statement.insertSelect) {
      // At the top level of an INSERT (not inside its SELECT), VALUES starts the data (Values format).
      statement.sql = buffer.toString('utf8', 0, token.end);
      statement.data = buffer.subarray(token.end);
      statement.format = 'Values';
      splitInsert(token.start);
      return statement;
    }
  }
  statement.sql = buffer.toString('utf8', 0, end);
  return statement;
}
