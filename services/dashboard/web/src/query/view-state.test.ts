import { describe, expect, it } from 'vitest';
import { readViewState, resolveView, viewSearch } from './view-state.ts';

describe('the view in the URL', () => {
  it('leaves defaults out and round-trips everything else', () => {
    expect(viewSearch(readViewState({}))).toBe('');
    const query = {
      period: 'custom',
      from: '2025-03-01',
      to: '2025-03-31',
      filters: 'channel==Email;page==/blog/*',
      interval: 'week',
      compare: 'year',
      metric: 'bounce_rate',
    };
    const search = viewSearch(readViewState(query));
    expect(Object.fromEntries(new URLSearchParams(search))).toEqual(query);
  });

  it('ignores values it does not know', () => {
    const state = readViewState({ period: 'forever', metric: 'revenue', compare: 'x', interval: 'minute' });
    expect(state).toMatchObject({ period: '30d', metric: 'visitors', compare: 'previous' });
    expect(state.interval).toBeUndefined();
  });

  it('asks for an interval the range allows', () => {
    const state = readViewState({ period: '90d', interval: 'hour' });
    expect(resolveView(state, '2025-03-12')).toEqual({
      range: { from: '2024-12-13', to: '2025-03-12' },
      interval: 'day',
    });
    expect(resolveView(readViewState({ period: 'today' }), '2025-03-12').interval).toBe('hour');
  });
});
