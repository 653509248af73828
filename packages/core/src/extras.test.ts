// The optional features' pure parts: path exclusion globs, the 404 event's data. (Clicks on links, hash routing, opt-out and
// Do Not Track run in real Chromium: test/tracker-script.test.ts.)
import { describe, expect, it } from 'vitest';
import { excludePaths, trackNotFound } from './extras.ts';

describe('excludePaths', () => {
  it('matches whole paths: * within a segment, ** across segments', () => {
    const excluded = excludePaths(['/admin/**', '/preview/*', ' /exact ', '/docs/*.pdf', '']);
    for (const path of ['/admin/', '/admin/users/42', '/preview/draft', '/exact', '/docs/a.pdf'])
      expect(excluded(path), path).toBe(true);
    for (const path of ['/admin', '/preview/draft/2', '/exact/', '/exactly', '/docs/apdf', '/', '/x/admin/'])
      expect(excluded(path), path).toBe(false);
  });

  it('treats regular-expression characters literally', () => {
    const excluded = excludePaths(['/a.b/(c)?', '/#/settings/**']);
    expect(excluded('/a.b/(c)?')).toBe(true);
    expect(excluded('/aXb/(c)?')).toBe(false);
    expect(excluded('/#/settings/profile')).toBe(true);
  });

  it('excludes nothing without patterns', () => {
    expect(excludePaths([])('/anything')).toBe(false);
  });
});

describe('trackNotFound', () => {
  it("sends the documented 404 event: the page's path and its referrer", () => {
    const sent: [string, Record<string, unknown> | undefined][] = [];
    const tracker = { event: (name: string, data?: Record<string, unknown>) => void sent.push([name, data]) };
    trackNotFound(tracker, { location: { pathname: '/old-pricing' }, referrer: 'https://news.example/' });
    trackNotFound(tracker, { location: { pathname: '/typo' }, referrer: '' });
    expect(sent).toEqual([
      ['404', { path: '/old-pricing', referrer: 'https://news.example/' }],
      ['404', { path: '/typo', referrer: '' }],
    ]);
  });
});
