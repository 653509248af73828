// How figures read on the page: whole counts in full with the reader's digit grouping (no "1.2k": the
// dashboard's numbers are exact and should be seen so), rates as percentages, durations as "3m 05s".

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: 2 });
const percent1 = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

export const formatCount = (n: number) => integer.format(n);
export const formatDecimal = (n: number | null) => (n === null ? '—' : decimal.format(n));
/** A fraction as a percentage: 0.5 → "50%", 0.1234 → "12.3%". */
export const formatPercent = (fraction: number | null | undefined) =>
  fraction === null || fraction === undefined ? '—' : percent1.format(fraction);

/** Seconds as "45s", "3m 05s", "1h 02m". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
}

export interface Change {
  /** "+25%", "−3 pp", "new"; null when there is nothing to compare. */
  text: string;
  direction: 'up' | 'down' | 'flat';
  /** Whether the change is good news (fewer bounces are). */
  good: boolean | null;
}

/**
 * The change of a figure against the comparison period: relative for counts and durations, in percentage
 * points for rates (a bounce rate going from 40% to 50% is "+10 pp", not "+25%").
 */
export function change(
  current: number | null,
  previous: number | null | undefined,
  kind: 'count' | 'rate',
  lowerIsBetter = false,
): Change | null {
  if (current === null || previous === null || previous === undefined) return null;
  let delta: number;
  let text: string;
  if (kind === 'rate') {
    delta = Math.round((current - previous) * 1000) / 10;
    text = `${delta > 0 ? '+' : delta < 0 ? '−' : '±'}${decimal.format(Math.abs(delta))} pp`;
  } else if (previous === 0) {
    if (current === 0) return { text: '±0%', direction: 'flat', good: null };
    return { text: 'new', direction: 'up', good: !lowerIsBetter };
  } else {
    delta = Math.round(((current - previous) / previous) * 100);
    text = `${delta > 0 ? '+' : delta < 0 ? '−' : '±'}${integer.format(Math.abs(delta))}%`;
  }
  const direction = delta > 0 ? 'up' : delta < 0 ? 'down' : 'flat';
  return {
    text,
    direction,
    good: direction === 'flat' ? null : (direction === 'up') !== lowerIsBetter,
  };
}
