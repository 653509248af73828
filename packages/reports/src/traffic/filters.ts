// The dashboard's filter syntax, parsed into conditions on the visits table. A filter keeps the visits that
// match it: a visit dimension matches the visit's own value; `page` a visit with such a pageview,
// `event_name` one with such a custom event, `prop:<key>` one with a custom event whose property <key>
// matches. Several filters all apply (AND); several values of one filter are alternatives (OR).
//
//   filters  = filter *( ";" filter )
//   filter   = dimension operator value *( "|" value )
//   operator = "==" | "!=" | "~=" | "!~"        (is, is not, contains, does not contain)
//   `\` escapes ";", "|" and "\" in a value; in page dimensions "*" matches any characters.
//
// Values never enter SQL text: every value is a query parameter.
import type { QueryParams } from '@tally/warehouse';
import { FILTER_DIMENSIONS, VISIT_DIMENSIONS, type VisitDimension } from './dimensions.ts';

export type FilterOperator = '==' | '!=' | '~=' | '!~';

export interface TrafficFilter {
  /** A filter dimension, or `prop:<key>`. */
  dimension: string;
  operator: FilterOperator;
  values: string[];
}

export class FilterSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterSyntaxError';
  }
}

const OPERATORS: FilterOperator[] = ['==', '!=', '~=', '!~'];
const PAGE_DIMENSIONS = new Set(['page', 'entry_page', 'exit_page']);
/** At most this many filters, and values per filter: a URL, not a query language. */
const MAX_FILTERS = 20;
const MAX_VALUES = 50;

/** Splits on an unescaped separator and unescapes `\x` to `x`. */
function splitEscaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      current += `\\${text[i + 1]}`;
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}
const unescaped = (text: string) => text.replace(/\\(.)/g, '$1');

/** Parses the `filters` parameter; throws FilterSyntaxError naming what is wrong (never quoting it). */
export function parseFilters(text: string | undefined): TrafficFilter[] {
  return parseFilterList(text, {
    keyPrefix: 'prop:',
    dimensions: FILTER_DIMENSIONS,
    help: `one of ${FILTER_DIMENSIONS.join(', ')}, prop:<key>`,
  });
}

/**
 * The filter syntax above over any set of dimensions plus `<keyPrefix><key>` (traffic: `prop:<key>`,
 * revenue: `metadata.<key>`), so every view's filters parse, escape and fail alike.
 */
export function parseFilterList(
  text: string | undefined,
  syntax: { keyPrefix: string; dimensions: readonly string[]; help: string },
): TrafficFilter[] {
  if (!text) return [];
  const prefix = syntax.keyPrefix;
  const pattern = new RegExp(
    `^([a-z_]+|${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:[^=!~\\\\]|\\\\.)+?)(==|!=|~=|!~)(.*)$`,
    's',
  );
  const filters: TrafficFilter[] = [];
  for (const part of splitEscaped(text, ';')) {
    if (part.trim() === '') continue;
    const match = pattern.exec(part);
    if (!match)
      throw new FilterSyntaxError('a filter must be <dimension><operator><values>, operators ==, !=, ~=, !~');
    const [, rawDimension, operator, rest] = match as unknown as [string, string, FilterOperator, string];
    const keyed = rawDimension.startsWith(prefix);
    const dimension = keyed ? `${prefix}${unescaped(rawDimension.slice(prefix.length))}` : rawDimension;
    if (!keyed && !syntax.dimensions.includes(dimension)) {
      throw new FilterSyntaxError(`unknown filter dimension (${syntax.help})`);
    }
    const values = splitEscaped(rest, '|').map(unescaped);
    if (values.length > MAX_VALUES) throw new FilterSyntaxError(`a filter has at most ${MAX_VALUES} values`);
    filters.push({ dimension, operator: OPERATORS.includes(operator) ? operator : '==', values });
  }
  if (filters.length > MAX_FILTERS) throw new FilterSyntaxError(`at most ${MAX_FILTERS} filters`);
  return filters;
}

/** A LIKE pattern for a value: `*` is the wildcard in page dimensions, every other character literal. */
function likePattern(value: string, wildcard: boolean, contains: boolean): string {
  const literal = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
  const body = wildcard ? value.split('*').map(literal).join('%') : literal(value);
  return contains ? `%${body}%` : body;
}

/**
 * The SQL condition (on a row of the visits table) of the filters, with its parameters named
 * `<prefix>N`. An empty list is `1`. `==` and `!=` without a wildcard compare values as they are (IN,
 * hasAny: fast); `*` and the contains operators match with LIKE.
 */
export function filterCondition(
  filters: readonly TrafficFilter[],
  prefix = 'f',
): { sql: string; params: QueryParams } {
  const params: QueryParams = {};
  const conditions: string[] = [];
  filters.forEach((filter, i) => {
    const name = `${prefix}${i}`;
    const negated = filter.operator === '!=' || filter.operator === '!~';
    const contains = filter.operator === '~=' || filter.operator === '!~';
    const wildcard = PAGE_DIMENSIONS.has(filter.dimension) && filter.values.some((v) => v.includes('*'));
    const like = contains || wildcard;
    params[name] = like
      ? filter.values.map((v) => likePattern(v, PAGE_DIMENSIONS.has(filter.dimension), contains))
      : filter.values;
    const values = `{${name}:Array(String)}`;
    /** A condition on one value: equal to one of the values, or LIKE one of the patterns. */
    const matches = (column: string) =>
      like ? `arrayExists(p -> ${column} LIKE p, ${values})` : `${column} IN ${values}`;
    let condition: string;
    if (filter.dimension === 'page') {
      condition = like
        ? `arrayExists(x -> ${matches('x')}, pageview_paths)`
        : `hasAny(pageview_paths, ${values})`;
    } else if (filter.dimension === 'event_name') {
      condition = like ? `arrayExists(x -> ${matches('x')}, event_names)` : `hasAny(event_names, ${values})`;
    } else if (filter.dimension.startsWith('prop:')) {
      params[`${name}k`] = filter.dimension.slice(5);
      condition = `arrayExists(d -> mapContains(d, {${name}k:String}) AND ${matches(`d[{${name}k:String}]`)}, event_data)`;
    } else {
      condition = matches(VISIT_DIMENSIONS[filter.dimension as VisitDimension]);
    }
    conditions.push(negated ? `NOT (${condition})` : condition);
  });
  return { sql: conditions.length ? conditions.join(' AND ') : '1', params };
}
