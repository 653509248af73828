// @tally/core: Tally's cookieless browser tracker. `init` once, then `pageview`, `event`, `identify`,
// `reset` and `getSessionId` from anywhere in the app. One tracker per page (a module-level singleton), so
// the React binding and direct imports share its queue and session (the script-tag bundles start their own).
// Every function is safe to call before `init`, twice, or on a server render: it then does nothing.
import { type BrowserTrackerConfig, createBrowserTracker, isBrowser, optOutState } from './browser.ts';
import { trackNotFound } from './extras.ts';
import type { PageviewOptions, Tracker } from './tracker.ts';

export { backoffDelay, isRetryableStatus, retryAfterMs } from '@tally/backoff';
export {
  type BrowserTrackerConfig,
  browserPlatform,
  createBrowserTracker,
  isBrowser,
  isLocalPage,
  OPT_OUT_KEY,
  type PlatformConfig,
} from './browser.ts';
export {
  DOWNLOAD_EXTENSIONS,
  doNotTrack,
  excludePaths,
  FILE_DOWNLOAD_EVENT,
  type LinkTracking,
  NOT_FOUND_EVENT,
  OUTBOUND_LINK_EVENT,
  trackLinks,
  trackNotFound,
} from './extras.ts';
export {
  createTracker,
  type PageInfo,
  type PageviewOptions,
  SESSION_TIMEOUT_MS,
  type SendResult,
  type Session,
  type SessionStore,
  type Tracker,
  type TrackerConfig,
  type TrackerPlatform,
} from './tracker.ts';

let current: Tracker | undefined;

/** Starts the page's tracker; later calls return the same tracker. Returns undefined outside a browser. */
export function init(config: BrowserTrackerConfig): Tracker | undefined {
  try {
    if (!current && isBrowser()) current = createBrowserTracker(config);
  } catch (error) {
    if (config.debug) console.info('[tally] init failed', error);
  }
  return current;
}

export const pageview = (options?: PageviewOptions): void => current?.pageview(options);
export const event = (name: string, data?: Record<string, unknown>): void => current?.event(name, data);
export const identify = (customerId: string): void => current?.identify(customerId);
export const reset = (): void => current?.reset();
/** The current session id ('' before init), e.g. to pass to your server for revenue attribution. */
export const getSessionId = (): string => current?.getSessionId() ?? '';
/** Marks this page as not found: a `404` event with its path and referrer (the dashboard's Not found list). */
export const notFound = (): void => {
  const page = globalThis as unknown as { location: { pathname: string }; document: { referrer: string } };
  if (current) trackNotFound(current, { location: page.location, referrer: page.document.referrer });
};
/** Stops this browser from sending anything to Tally on this site, remembered in localStorage. */
export const optOut = (): void => void optOutState('1');
/** Undoes optOut. */
export const optIn = (): void => void optOutState('');
/** Whether this browser opted out on this site. */
export const isOptedOut = (): boolean => optOutState();
