// Runs independent warehouse requests of one batch side by side, a few at a time: round trips to a
// ClickHouse server (or the HTTP interface over chDB, which runs requests in parallel) overlap instead of
// adding up, without one batch taking every slot the server has.

/** `work` of each of `items`, at most `limit` at once; the results in the order of `items`. */
export async function concurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
