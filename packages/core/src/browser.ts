// The browser platform of the tracker: fetch with keepalive for normal sends, sendBeacon for the unload
// flush, crypto UUIDs, the current page, and automatic pageviews for full loads and SPA navigations.
// The repository type-checks without the DOM library (it would retype Node's timers for every package), so
// the few browser globals used here are declared structurally below.
import { createTracker, type Tracker, type TrackerConfig, type TrackerPlatform } from './tracker.ts';

interface BrowserGlobals {
  location: { href: string; pathname: string; search: string };
  history: Record<'pushState' | 'replaceState', (...args: unknown[]) => void>;
  document: { title: string; referrer: string; visibilityState: string };
  navigator: { language?: string; sendBeacon?(url: string, body: string): boolean };
  screen?: { width?: number };
  crypto: { getRandomValues(bytes: Uint8Array): Uint8Array };
  addEventListener(type: string, listener: (event: { persisted?: boolean }) => void): void;
}

const browser = globalThis as unknown as BrowserGlobals;

/** True where the tracker can run: a browser page (not a server render, not a worker). */
export const isBrowser = (): boolean =>
  typeof (globalThis as Partial<BrowserGlobals>).document === 'object' && !!browser.history;

/** A v4 UUID from crypto.getRandomValues, which, unlike crypto.randomUUID, also exists on plain-http pages. */
export function uuid(): string {
  const bytes = browser.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 15) | 64;
  bytes[8] = ((bytes[8] as number) & 63) | 128;
  let hex = '';
  for (const byte of bytes) hex += (byte + 256).toString(16).slice(1);
  return hex.replace(/(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}

/**
 * Normal sends use fetch with `keepalive` (so a send survives a navigation) and the X-API-Token header, because
 * fetch tells the tracker the status: that is what lets it retry 5xx and honour a 429's Retry-After.
 * sendBeacon tells nothing back, so it is kept for the flush when the page is hidden or unloaded, where it is
 * the most reliable way out; it sends the envelope as text/plain with the token in the body (no preflight).
 */
export function browserPlatform(): TrackerPlatform {
  return {
    post: (url, token, body) =>
      fetch(url, {
        method: 'POST',
        keepalive: true,
        headers: { 'Content-Type': 'application/json', 'X-API-Token': token },
        body,
      }).then((response) => ({ status: response.status, retryAfter: response.headers.get('Retry-After') })),
    beacon: (url, body) => !!browser.navigator.sendBeacon?.(url, body),
    now: Date.now,
    setTimer: (callback, ms) => setTimeout(callback, ms),
    random: Math.random,
    uuid,
    page: () => ({
      url: browser.location.href,
      path: browser.location.pathname,
      referrer: browser.document.referrer || null,
      title: browser.document.title,
      locale: browser.navigator.language,
      screen_width: browser.screen?.width,
    }),
  };
}

/**
 * Counts a pageview now and on every later navigation: history.pushState/replaceState (SPA routers) and
 * popstate (back/forward), plus pages restored from the back-forward cache. A navigation is a change of path
 * or query string, so replaceState to the same URL or a hash change is not a new pageview. Later pageviews
 * name the previous page as their referrer, as a full page load would.
 */
export function trackNavigations(tracker: Tracker): void {
  const { location, history } = browser;
  let last = '';
  let previousUrl = '';
  const check = () => {
    const key = location.pathname + location.search;
    if (key === last) return;
    const referrer = previousUrl;
    last = key;
    previousUrl = location.href;
    tracker.pageview(referrer ? { referrer } : {});
  };
  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method];
    history[method] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      try {
        check();
      } catch {
        // never break the host application's navigation
      }
      return result;
    };
  }
  browser.addEventListener('popstate', check);
  browser.addEventListener('pageshow', (event) => {
    if (event.persisted) {
      last = '';
      check();
    }
  });
  check();
}

/** Flushes the queue with the beacon when the page is hidden (mobile often never fires pagehide) or left. */
export function flushOnHide(tracker: Tracker): void {
  browser.addEventListener('pagehide', tracker.flush);
  browser.addEventListener('visibilitychange', () => {
    if (browser.document.visibilityState === 'hidden') tracker.flush();
  });
}

export interface BrowserTrackerConfig extends TrackerConfig {
  /** Count pageviews automatically, SPA navigations included (default true). */
  autoPageviews?: boolean;
}

/** A tracker wired to this page. */
export function createBrowserTracker(config: BrowserTrackerConfig): Tracker {
  const tracker = createTracker(config, browserPlatform());
  flushOnHide(tracker);
  if (config.autoPageviews !== false) trackNavigations(tracker);
  return tracker;
}
