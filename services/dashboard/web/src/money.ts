// Money as people read it: the reader's locale with the currency's symbol, rounded to the currency's usual
// decimals (cents) in tables and legends, compact ("$12.3K") on figure cards past 10,000 and on chart axes.
// The API sends money as exact decimal text ("96.666667"); the exact value stays readable where the page
// relies on it (drill-downs, the reconciliation, each card's title) through formatMoneyExact, which never
// rounds. The text goes to Intl as a string, so even amounts past a double's precision format exactly.

type Style = 'rounded' | 'exact' | 'compact' | 'axis';

const formatters = new Map<string, Intl.NumberFormat | null>();

function formatterOf(currency: string, style: Style): Intl.NumberFormat | null {
  const key = `${currency}/${style}`;
  let formatter = formatters.get(key);
  if (formatter === undefined) {
    try {
      const base: Intl.NumberFormatOptions = { style: 'currency', currency };
      if (style === 'exact') {
        // At least the currency's usual decimals ($150.00, ¥205), and every one the API sent (up to 6).
        const usual = new Intl.NumberFormat(undefined, base).resolvedOptions().minimumFractionDigits ?? 2;
        base.minimumFractionDigits = usual;
        base.maximumFractionDigits = Math.max(6, usual);
      } else if (style === 'compact') {
        base.notation = 'compact';
        base.maximumSignificantDigits = 3;
      } else if (style === 'axis') {
        base.notation = 'compact';
        base.minimumFractionDigits = 0;
        base.maximumFractionDigits = 1;
      }
      formatter = new Intl.NumberFormat(undefined, base);
    } catch {
      formatter = null; // not a currency code the browser accepts: the amount and the code, below
    }
    formatters.set(key, formatter);
  }
  return formatter;
}

const plain = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 });

function format(value: string | number, currency: string, style: Style): string {
  const formatter = formatterOf(currency, style);
  // Intl reads a decimal string exactly (no detour through a double); the types know only numbers.
  const input = value as unknown as number;
  return formatter ? formatter.format(input) : `${plain.format(input)} ${currency}`;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** "$1,280.00", "-$12.50": the currency's symbol and usual decimals; "—" for no figure. */
export function formatMoney(text: string | null | undefined, currency: string): string {
  if (text === null || text === undefined || !DECIMAL.test(text)) return '—';
  return format(text, currency, 'rounded');
}

/** Every decimal the API sent, never rounded: "$96.666667", "$150.00", "¥205". */
export function formatMoneyExact(text: string | null | undefined, currency: string): string {
  if (text === null || text === undefined || !DECIMAL.test(text)) return '—';
  return format(text, currency, 'exact');
}

/** For a figure card: as formatMoney below 10,000 in size, compact from there on ("$12.3K", "$1.23M"). */
export function formatMoneyShort(text: string | null | undefined, currency: string): string {
  if (text === null || text === undefined || !DECIMAL.test(text)) return '—';
  return Math.abs(Number(text)) < 10_000
    ? format(text, currency, 'rounded')
    : format(text, currency, 'compact');
}

/** For a chart axis: compact, whole where it can be ("$0", "$500", "$1.5K", "$2M"). */
export const formatMoneyAxis = (value: number, currency: string): string => format(value, currency, 'axis');
