// Lists as CSV (RFC 4180): a header line with the columns, then one line per row, CRLF. A text cell that a
// spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading apostrophe: paths, UTM values
// and event properties come from visitors' browsers.
export function toCsv(rows: readonly object[], columns?: readonly string[]): string {
  const cells = rows.map((row) => new Map<string, unknown>(Object.entries(row)));
  const header = columns ?? [...new Set(cells.flatMap((row) => [...row.keys()]))];
  const lines = [header.map(cell).join(',')];
  for (const row of cells) lines.push(header.map((c) => cell(row.get(c))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Whether a request asks for CSV: `format=csv`, or an Accept that prefers text/csv to JSON. */
export function wantsCsv(format: string | undefined, accept: string | undefined): boolean {
  if (format) return format === 'csv';
  if (!accept) return false;
  const csv = accept.indexOf('text/csv');
  const json = accept.indexOf('application/json');
  return csv !== -1 && (json === -1 || csv < json);
}
