// The filters of a view, in the read API's own syntax (`channel==Email|Direct;page==/blog/*`), which is also
// what the page's URL carries (`?filters=…`), so a bookmarked or shared view asks the API exactly what it
// showed. Parsing here is lenient (a hand-edited URL with a broken part drops that part); the API is the
// judge of what is valid.

export type FilterOperator = '==' | '!=' | '~=' | '!~';

export interface Filter {
  /** A filter dimension (`page`, `channel`, …) or `prop:<key>`. */
  dimension: string;
  operator: FilterOperator;
  values: string[];
}

export const OPERATORS: { op: FilterOperator; label: string }[] = [
  { op: '==', label: 'is' },
  { op: '!=', label: 'is not' },
  { op: '~=', label: 'contains' },
  { op: '!~', label: 'does not contain' },
];

/** Every dimension a filter may name (besides `prop:<key>`), with the label the app shows. */
export const FILTER_DIMENSIONS: { id: string; label: string }[] = [
  { id: 'page', label: 'Page' },
  { id: 'entry_page', label: 'Entry page' },
  { id: 'exit_page', label: 'Exit page' },
  { id: 'channel', label: 'Channel' },
  { id: 'source', label: 'Source' },
  { id: 'referrer', label: 'Referrer' },
  { id: 'utm_source', label: 'UTM source' },
  { id: 'utm_medium', label: 'UTM medium' },
  { id: 'utm_campaign', label: 'UTM campaign' },
  { id: 'utm_term', label: 'UTM term' },
  { id: 'utm_content', label: 'UTM content' },
  { id: 'country', label: 'Country' },
  { id: 'region', label: 'Region' },
  { id: 'city', label: 'City' },
  { id: 'browser', label: 'Browser' },
  { id: 'os', label: 'Operating system' },
  { id: 'device', label: 'Device type' },
  { id: 'screen_size', label: 'Screen size' },
  { id: 'hostname', label: 'Hostname' },
  { id: 'event_name', label: 'Event' },
];

export function dimensionLabel(dimension: string): string {
  if (dimension.startsWith('prop:')) return `Property ${dimension.slice(5)}`;
  return FILTER_DIMENSIONS.find((d) => d.id === dimension)?.label ?? dimension;
}

export const operatorLabel = (op: FilterOperator) => OPERATORS.find((o) => o.op === op)?.label ?? op;

const escapeValue = (text: string) => text.replace(/[\\;|]/g, (c) => `\\${c}`);

/** Splits on an unescaped separator, keeping escapes (they are undone once the parts are known). */
function splitEscaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[i + 1];
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}
const unescapeValue = (text: string) => text.replace(/\\(.)/g, '$1');

const keyedPattern = (prefix: string) =>
  new RegExp(
    `^([a-z_]+|${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:[^=!~\\\\]|\\\\.)+?)(==|!=|~=|!~)(.*)$`,
    's',
  );

/**
 * `keyPrefix` names keyed dimensions: `prop:<key>` in the traffic views, `metadata.<key>` in the revenue
 * views (the same syntax otherwise).
 */
export function parseFilters(text: string | undefined | null, keyPrefix = 'prop:'): Filter[] {
  if (!text) return [];
  const filters: Filter[] = [];
  for (const part of splitEscaped(text, ';')) {
    const match = keyedPattern(keyPrefix).exec(part);
    if (!match) continue;
    const [, dimension, operator, rest] = match as unknown as [string, string, FilterOperator, string];
    filters.push({
      dimension: dimension.startsWith(keyPrefix)
        ? `${keyPrefix}${unescapeValue(dimension.slice(keyPrefix.length))}`
        : dimension,
      operator,
      values: splitEscaped(rest, '|').map(unescapeValue),
    });
  }
  return filters;
}

export function serializeFilters(filters: Filter[], keyPrefix = 'prop:'): string {
  return filters
    .map((f) => {
      const dimension = f.dimension.startsWith(keyPrefix)
        ? `${keyPrefix}${f.dimension.slice(keyPrefix.length).replace(/[\\;|=!~]/g, (c) => `\\${c}`)}`
        : f.dimension;
      return `${dimension}${f.operator}${f.values.map(escapeValue).join('|')}`;
    })
    .join(';');
}

/**
 * The filters with `dimension == value` added: a value already filtered on is left as it is, another value
 * of an `is` filter on the same dimension replaces it (clicking a row narrows to that row, as Plausible does).
 */
export function withFilter(filters: Filter[], dimension: string, value: string): Filter[] {
  const others = filters.filter((f) => !(f.dimension === dimension && f.operator === '=='));
  return [...others, { dimension, operator: '==', values: [value] }];
}

export const withoutFilter = (filters: Filter[], index: number): Filter[] =>
  filters.filter((_, i) => i !== index);
