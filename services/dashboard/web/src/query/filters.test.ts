import { describe, expect, it } from 'vitest';
import { parseFilters, serializeFilters, withFilter, withoutFilter } from './filters.ts';

describe('filters in the URL', () => {
  it('reads the API syntax: several filters, several values, every operator', () => {
    expect(
      parseFilters('channel==Organic Search|Email;page==/blog/*;country!=US;referrer~=google;os!~Win'),
    ).toEqual([
      { dimension: 'channel', operator: '==', values: ['Organic Search', 'Email'] },
      { dimension: 'page', operator: '==', values: ['/blog/*'] },
      { dimension: 'country', operator: '!=', values: ['US'] },
      { dimension: 'referrer', operator: '~=', values: ['google'] },
      { dimension: 'os', operator: '!~', values: ['Win'] },
    ]);
  });

  it('round-trips values holding the separators and property keys holding operators', () => {
    const filters = [
      { dimension: 'utm_campaign', operator: '==' as const, values: ['a;b', 'c|d', 'back\\slash', ''] },
      { dimension: 'prop:plan=tier!', operator: '~=' as const, values: ['pro'] },
    ];
    const text = serializeFilters(filters);
    expect(text).toBe('utm_campaign==a\\;b|c\\|d|back\\\\slash|;prop:plan\\=tier\\!~=pro');
    expect(parseFilters(text)).toEqual(filters);
  });

  it("reads and writes the revenue views' metadata.<key> dimensions the same way", () => {
    const filters = [
      { dimension: 'plan', operator: '==' as const, values: ['pro', 'team'] },
      { dimension: 'metadata.seat=s;', operator: '!=' as const, values: ['a|b'] },
    ];
    const text = serializeFilters(filters, 'metadata.');
    expect(text).toBe('plan==pro|team;metadata.seat\\=s\\;!=a\\|b');
    expect(parseFilters(text, 'metadata.')).toEqual(filters);
    expect(parseFilters('metadata.team==x')).toEqual([]);
  });

  it('drops parts it cannot read rather than the whole URL', () => {
    expect(parseFilters('nonsense;channel==Email;')).toEqual([
      { dimension: 'channel', operator: '==', values: ['Email'] },
    ]);
    expect(parseFilters(undefined)).toEqual([]);
  });

  it('a clicked row replaces an "is" filter on the same dimension and keeps the others', () => {
    const start = parseFilters('channel==Email;country!=US');
    expect(serializeFilters(withFilter(start, 'channel', 'Direct'))).toBe('country!=US;channel==Direct');
    expect(serializeFilters(withFilter(start, 'page', '/'))).toBe('channel==Email;country!=US;page==/');
    expect(serializeFilters(withoutFilter(start, 0))).toBe('country!=US');
  });
});
