// @tally/react: the React binding of the Tally tracker. <TallyProvider> configures the page's tracker,
// useTally() gives components its API, and usePageviews(path) / <TrackPageviews path> count a pageview
// whenever the path your router reports changes, so it works with any router (React Router, Next.js,
// TanStack, wouter, hash routers). Safe under server rendering: nothing touches `window` during render;
// the tracker starts on its first use in the browser (an effect or an event handler).
// Written with createElement rather than JSX so that the package needs no JSX compile step.
import { type BrowserTrackerConfig, init, type PageviewOptions } from '@tally/core';
import { createContext, createElement, type ReactNode, useContext, useEffect, useMemo, useRef } from 'react';

export interface TallyApi {
  pageview(options?: PageviewOptions): void;
  event(name: string, data?: Record<string, unknown>): void;
  identify(customerId: string): void;
  reset(): void;
  /** The current session id ('' on the server). */
  getSessionId(): string;
}

const noop = () => {};
/** What useTally() returns outside a provider and on the server: calls that do nothing. */
const inert: TallyApi = { pageview: noop, event: noop, identify: noop, reset: noop, getSessionId: () => '' };

const TallyContext = createContext<TallyApi>(inert);

export interface TallyProviderProps extends BrowserTrackerConfig {
  /**
   * Count pageviews from the History API (pushState, replaceState, popstate) automatically. Off by default
   * here: render <TrackPageviews path={…}/> with your router's path instead, so that pageviews follow your
   * routes. Turn it on only without TrackPageviews, or every navigation is counted twice.
   */
  autoPageviews?: boolean;
  children?: ReactNode;
}

/**
 * Configures the page's one tracker (the @tally/core singleton: direct `@tally/core` calls on the same page
 * share it; its first configuration wins). The script-tag bundle starts a tracker of its own: use one or
 * the other on a page.
 */
export function TallyProvider(props: TallyProviderProps) {
  const { children, token, endpoint, autoPageviews = false, maxRetries, retryBackoff, debug } = props;
  const { allowLocalhost, respectDoNotTrack, hashRouting, outboundLinks, fileDownloads, exclude } = props;
  const api = useMemo<TallyApi>(() => {
    // init() returns the running tracker, or starts it; it returns undefined on a server.
    const tracker = () =>
      init({
        token,
        endpoint,
        autoPageviews,
        maxRetries,
        retryBackoff,
        debug,
        allowLocalhost,
        respectDoNotTrack,
        hashRouting,
        outboundLinks,
        fileDownloads,
        exclude,
      });
    return {
      pageview: (options) => tracker()?.pageview(options),
      event: (name, data) => tracker()?.event(name, data),
      identify: (customerId) => tracker()?.identify(customerId),
      reset: () => tracker()?.reset(),
      getSessionId: () => tracker()?.getSessionId() ?? '',
    };
  }, [
    token,
    endpoint,
    autoPageviews,
    maxRetries,
    retryBackoff,
    debug,
    allowLocalhost,
    respectDoNotTrack,
    hashRouting,
    outboundLinks,
    fileDownloads,
    exclude,
  ]);
  // Start the tracker once mounted in the browser even if nothing calls it (automatic pageviews, unload flush).
  useEffect(() => {
    api.getSessionId();
  }, [api]);
  return createElement(TallyContext.Provider, { value: api }, children);
}

/** The tracker's API: pageview, event, identify, reset, getSessionId. Inert on the server. */
export function useTally(): TallyApi {
  return useContext(TallyContext);
}

/**
 * Counts a pageview when `path` changes (pass your router's current path, e.g. React Router's
 * `useLocation().pathname`, Next.js's `usePathname()`, or the hash route). Counted once per change, also
 * under StrictMode's double effects; `undefined` counts nothing. Later pageviews name the previous page as
 * their referrer.
 */
export function usePageviews(path: string | undefined): void {
  const tally = useTally();
  const last = useRef<{ path?: string; url?: string }>({});
  useEffect(() => {
    if (path === undefined || path === last.current.path) return;
    const referrer = last.current.url;
    const url = (globalThis as { location?: { href: string } }).location?.href;
    last.current = { path, url };
    tally.pageview(referrer ? { path, referrer } : { path });
  }, [path, tally]);
}

/** Component form of usePageviews: `<TrackPageviews path={location.pathname} />` inside the provider. */
export function TrackPageviews({ path }: { path: string | undefined }): null {
  usePageviews(path);
  return null;
}
