// The browser platform of the tracker: fetch with keepalive for normal sends, sendBeacon for the unload
// flush, crypto UUIDs, the current page, and automatic pageviews for full loads and SPA navigations.
// The repository type-checks without the DOM library (it would retype Node's timers for every package), so
// the few browser globals used here are declared structurally below.
import { privacyFilter, trackLinks } from './extras.ts';
import { createTracker, type Tracker, type TrackerConfig, type TrackerPlatform } from './tracker.ts';

interface BrowserGlobals {
  location: {
    href: string;
    pathname: string;
    search: string;
    hash: string;
    hostname: string;
    protocol: string;
  };
  history: Record<'pushState' | 'replaceState', (...args: unknown[]) => void>;
  document: { title: string; referrer: string; visibilityState: string };
  navigator: {
    language?: string;
    sendBeacon?(url: string, body: string): boolean;
    doNotTrack?: string | null;
    globalPrivacyControl?: boolean;
  };
  screen?: { width?: number };
  localStorage?: {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
  };
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

/** The localStorage key that remembers `optOut()` on this site. */
export const OPT_OUT_KEY = 'tally_opt_out';

/**
 * Whether the visitor opted out on this site, or with `value`, remembers it ('1': opted out, '': not).
 * Storage may be refused (sandboxed frames, some private modes): then nothing is remembered.
 */
export function optOutState(value?: '1' | ''): boolean {
  try {
    const storage = browser.localStorage as unknown as Record<string, string | undefined>;
    if (value !== undefined) storage[OPT_OUT_KEY] = value;
    return storage[OPT_OUT_KEY] === '1';
  } catch {
    return false;
  }
}

/**
 * A page served from this machine (localhost, 127.x, [::1]) or from a file (file: pages have no host name):
 * development, not traffic.
 */
export const isLocalPage = (): boolean =>
  /^(localhost|127\.|\[::1\]$|$)|\.localhost$/.test(browser.location.hostname);

/**
 * Says once, in the console a developer has open, that this page is not counted because it is their own
 * machine's (`how` names the option that counts it). Not in tally.js, whose 2 KB budget it would break:
 * there the dashboard's install guide says it while it waits for the first pageview.
 */
export function hintLocalPage(allowLocalhost: boolean | undefined, how: string): void {
  if (!allowLocalhost && isLocalPage())
    console.info(`[tally] a page on this machine (localhost, 127.x, file:) is not counted; ${how} counts it`);
}

/**
 * The page's path as reports see it, and what makes a navigation: the path, or the path and the hash once
 * routeByHash() ran (a site routing by hash, `/#/pricing`). A module variable rather than an option, so
 * that the base script-tag bundle, which never routes by hash, carries no code for it.
 */
let pagePath = (): string => browser.location.pathname;

/** Hash routing: a hash change is a navigation, and the hash is part of the path (`/#/pricing`). */
export function routeByHash(): void {
  pagePath = () => browser.location.pathname + browser.location.hash;
}

/** What the browser platform itself needs of the configuration. */
export interface PlatformConfig {
  allowLocalhost?: boolean | undefined;
  /** Send nothing while this returns true (Do Not Track, excluded paths: see extras.ts). */
  ignore?: (() => boolean) | undefined;
}

/**
 * Normal sends use fetch with `keepalive` (so a send survives a navigation) and the X-API-Token header, because
 * fetch tells the tracker the status: that is what lets it retry 5xx and honour a 429's Retry-After.
 * sendBeacon tells nothing back, so it is kept for the flush when the page is hidden or unloaded, where it is
 * the most reliable way out; it sends the envelope as text/plain with the token in the body (no preflight).
 */
export function browserPlatform(config: PlatformConfig = {}): TrackerPlatform {
  return {
    post: (url, _token, body) =>
      fetch(url, {
        method: 'POST',
        keepalive: true,
        body,
      }).then((response) => ({ status: response.status, retryAfter: response.headers.get('Retry-After') })),
    beacon: (url, body) => !!browser.navigator.sendBeacon?.(url, body),
    now: Date.now,
    setTimer: (callback, ms) => setTimeout(callback, ms),
    random: Math.random,
    uuid,
    page: () => ({
      url: browser.location.href,
      path: pagePath(),
      referrer: browser.document.referrer || null,
      title: browser.document.title,
      locale: browser.navigator.language,
      screen_width: browser.screen?.width,
    }),
    blocked: () => optOutState() || (!config.allowLocalhost && isLocalPage()) || !!config.ignore?.(),
  };
}

/**
 * Counts a pageview now and on every later navigation: history.pushState/replaceState (SPA routers) and
 * popstate (back/forward), plus pages restored from the back-forward cache. A navigation is a change of path
 * or query string, so replaceState to the same URL or a hash change is not a new pageview, unless the site
 * routes by hash (routeByHash: a hash change fires popstate too). Later pageviews name the previous page as
 * their referrer, as a full page load would.
 */
export function trackNavigations(tracker: Tracker): void {
  const { location, history } = browser;
  let last = '';
  let previousUrl = '';
  const check = () => {
    const key = pagePath() + location.search;
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
  /** Count pageviews automatically, SPA navigations included (default true); false: call pageview() yourself. */
  autoPageviews?: boolean;
  /** The site routes by the URL's hash (`/#/pricing`): a hash change is a pageview, and the hash is in `path`. */
  hashRouting?: boolean;
  /** Send from localhost, 127.x, [::1] and file: pages too (by default they send nothing: development). */
  allowLocalhost?: boolean;
  /** Send nothing from browsers with Do Not Track or Global Privacy Control on. */
  respectDoNotTrack?: boolean;
  /** Send nothing from pages whose path matches one of these globs (`*`: within a segment, `**`: any). */
  exclude?: readonly string[];
  /** Count clicks on links to other sites as `Outbound Link: Click` events with the URL. */
  outboundLinks?: boolean;
  /** Count clicks on links to files as `File Download` events: true for common extensions, or a list. */
  fileDownloads?: boolean | readonly string[];
}

/** A tracker wired to this page, with every option (the script-tag bundles wire only what they carry). */
export function createBrowserTracker(config: BrowserTrackerConfig): Tracker {
  if (config.hashRouting) routeByHash();
  hintLocalPage(config.allowLocalhost, '`allowLocalhost: true`');
  const tracker = createTracker(config, browserPlatform({ ...config, ignore: privacyFilter(config) }));
  flushOnHide(tracker);
  if (config.outboundLinks || config.fileDownloads)
    trackLinks(tracker, { outbound: config.outboundLinks, downloads: config.fileDownloads });
  if (config.autoPageviews !== false) trackNavigations(tracker);
  return tracker;
}
