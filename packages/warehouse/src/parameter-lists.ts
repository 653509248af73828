// The lists a consumer looks up (`… IN {ids:Array(String)}`: a batch's record ids, transaction ids,
// visitors, customers) cut into lists that any ClickHouse takes as one query parameter. A parameter travels
// in the URL while short and in a multipart/form-data field of the body when long (see
// clickhouse/clickhouse-warehouse.ts), and ClickHouse refuses a form field over
// `http_max_field_value_size` (128 KiB by default) as it refuses a URL over `http_max_uri_size`. So a list
// is cut by its size as the server reads it, not only by its count: 5,000 record ids are three lookups,
// a thousand transaction ids of 256 characters five. Measured in docs/design/consumers.md ("Lookups of a batch").

/**
 * Bytes of a list's parameter value, at most: half of ClickHouse's default field limit, as escaping (a
 * quote or backslash written as two characters) at most doubles a value.
 */
export const PARAMETER_BYTES = 64 * 1024;

/** `values` cut in order into lists of at most `maxItems` values and PARAMETER_BYTES of parameter text. */
export function parameterLists<T extends string>(
  values: readonly T[],
  maxItems: number,
  maxBytes = PARAMETER_BYTES,
): T[][] {
  const lists: T[][] = [];
  let list: T[] = [];
  let bytes = 2; // the brackets
  for (const value of values) {
    // Quoted and followed by a comma, as the client writes an Array(String) parameter.
    const size = Buffer.byteLength(value) + 3;
    if (list.length > 0 && (list.length === maxItems || bytes + size > maxBytes)) {
      lists.push(list);
      list = [];
      bytes = 2;
    }
    list.push(value);
    bytes += size;
  }
  if (list.length > 0) lists.push(list);
  return lists;
}

/** One look-up of crossProjectLookups: its values, the projects that asked for them, and the items. */
export interface CrossProjectLookup<T> {
  /** Distinct values, one list as parameterLists cuts them. */
  values: string[];
  /** The projects of those items (`project_id IN {projects} AND … IN {values}`). */
  projects: string[];
  /** Every item whose value is in `values`, whatever its project. */
  items: T[];
}

/**
 * Items of any projects (a batch's record ids, transaction ids, visitors) as look-ups of one statement
 * each, every project together: a statement per project cost more than the reads themselves where a
 * connection runs one statement at a time (chDB). A value asked for in several projects is one value of
 * its list. The statement reads `project_id IN … AND value IN …`, a cross product: a row of a project that
 * did not ask for its value is the caller's to leave out (by the item it matches, or none).
 */
export function crossProjectLookups<T extends { project: string }>(
  items: readonly T[],
  valueOfItem: (item: T) => string,
  maxItems: number,
  maxBytes = PARAMETER_BYTES,
): CrossProjectLookup<T>[] {
  const byValue = new Map<string, T[]>();
  for (const item of items) {
    const value = valueOfItem(item);
    const same = byValue.get(value);
    if (same) same.push(item);
    else byValue.set(value, [item]);
  }
  return parameterLists([...byValue.keys()], maxItems, maxBytes).map((values) => {
    const listed = values.flatMap((value) => byValue.get(value) ?? []);
    return { values, projects: [...new Set(listed.map((item) => item.project))], items: listed };
  });
}
