import { describe, expect, it } from 'vitest';
import { change, formatDuration, formatPercent } from './format.ts';

describe('figures as they read', () => {
  it('durations', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(45.4)).toBe('45s');
    expect(formatDuration(180)).toBe('3m 00s');
    expect(formatDuration(185)).toBe('3m 05s');
    expect(formatDuration(3720)).toBe('1h 02m');
    expect(formatDuration(null)).toBe('—');
  });

  it('rates', () => {
    expect(formatPercent(0.5)).toBe('50%');
    expect(formatPercent(0.1234)).toBe('12.3%');
    expect(formatPercent(null)).toBe('—');
  });

  it('changes: relative for counts, in points for rates, fewer bounces being good news', () => {
    expect(change(5, 4, 'count')).toEqual({ text: '+25%', direction: 'up', good: true });
    expect(change(3, 4, 'count')).toEqual({ text: '−25%', direction: 'down', good: false });
    expect(change(3, 0, 'count')).toEqual({ text: 'new', direction: 'up', good: true });
    expect(change(0, 0, 'count')).toEqual({ text: '±0%', direction: 'flat', good: null });
    expect(change(0.5, 0.4, 'rate', true)).toEqual({ text: '+10 pp', direction: 'up', good: false });
    expect(change(0.25, 0.5, 'rate', true)).toEqual({ text: '−25 pp', direction: 'down', good: true });
    expect(change(1, null, 'count')).toBeNull();
  });
});
