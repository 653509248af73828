// The tracker's optional features that the base script-tag bundle leaves out to keep its 2 KB budget
// (tally.full.js has them; bundled applications import them): clicks on outbound links and on file
// downloads, sent as custom events with the link's URL, and path exclusion by glob patterns.
import type { Tracker } from './tracker.ts';

const page = globalThis as unknown as {
  location: { host: string; pathname: string; hash: string };
  navigator: { doNotTrack?: string | null; globalPrivacyControl?: boolean };
  document: { addEventListener(type: string, listener: (event: ClickEvent) => void, capture: boolean): void };
};

/** Whether the browser asks not to be tracked: Do Not Track, or Global Privacy Control. */
export const doNotTrack = (): boolean =>
  page.navigator.doNotTrack === '1' || page.navigator.globalPrivacyControl === true;

/**
 * The platform's `ignore` for the options that need this module: Do Not Track / GPC when asked to respect
 * them, and path exclusion (matched against the path reports see: with the hash under hash routing).
 */
export function privacyFilter(options: {
  respectDoNotTrack?: boolean | undefined;
  exclude?: readonly string[] | undefined;
  hashRouting?: boolean | undefined;
}): (() => boolean) | undefined {
  // The path as reports see it: with the hash under hash routing.
  const excluded = options.exclude?.length ? excludePaths(options.exclude) : undefined;
  if (!options.respectDoNotTrack && !excluded) return undefined;
  return () =>
    (!!options.respectDoNotTrack && doNotTrack()) ||
    !!excluded?.(page.location.pathname + (options.hashRouting ? page.location.hash : ''));
}

/** The custom event of a click on a link to another site. */
export const OUTBOUND_LINK_EVENT = 'Outbound Link: Click';
/** The custom event of a click on a link to a file. */
export const FILE_DOWNLOAD_EVENT = 'File Download';
/** File extensions counted as downloads unless a list of one's own is given. */
export const DOWNLOAD_EXTENSIONS = [
  'pdf',
  'xlsx',
  'xls',
  'csv',
  'docx',
  'doc',
  'txt',
  'rtf',
  'pptx',
  'ppt',
  'key',
  'odt',
  'ods',
  'odp',
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  '7z',
  'rar',
  'dmg',
  'pkg',
  'exe',
  'msi',
  'deb',
  'rpm',
  'apk',
  'iso',
  'mp3',
  'wav',
  'flac',
  'mp4',
  'mov',
  'avi',
  'mkv',
  'epub',
];

/**
 * A predicate for BrowserTrackerConfig.ignorePath from glob patterns: `*` is any run of characters other
 * than `/`, `**` any run at all; a pattern matches the whole path. `['/admin/**', '/preview/*']`.
 */
export function excludePaths(patterns: readonly string[]): (path: string) => boolean {
  const regexps = patterns
    .map((pattern) => pattern.trim())
    .filter(Boolean)
    .map(
      (pattern) =>
        new RegExp(
          `^${pattern
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/\*\*|\*/g, (star) => (star === '*' ? '[^/]*' : '.*'))}$`,
        ),
    );
  return (path) => regexps.some((regexp) => regexp.test(path));
}

export interface LinkTracking {
  /** Count clicks on links to other hosts (`Outbound Link: Click`, `{ url }`). */
  outbound?: boolean | undefined;
  /** Count clicks on links to files (`File Download`, `{ url }`): true for DOWNLOAD_EXTENSIONS, or a list. */
  downloads?: boolean | readonly string[] | undefined;
}

interface LinkElement {
  href: string;
  closest?(selector: string): LinkElement | null;
}
interface ClickEvent {
  target: LinkElement | null;
  button?: number;
}

/**
 * Counts clicks on links, left and middle (auxclick), as custom events. The record is queued during the
 * click and sent at once with fetch `keepalive`, which outlives the page the link leaves; whatever is still
 * queued when the page goes is flushed by the beacon (browser.ts). A link that is both is a download.
 */
export function trackLinks(tracker: Pick<Tracker, 'event'>, options: LinkTracking): void {
  const extensions = options.downloads === true ? DOWNLOAD_EXTENSIONS : options.downloads || [];
  const onClick = (event: ClickEvent) => {
    if (event.button !== undefined && event.button > 1) return;
    const link = event.target?.closest?.('a[href]');
    if (!link) return;
    const url = new URL(link.href);
    if (!/^https?:$/.test(url.protocol)) return;
    const extension = /\.([a-z0-9]+)$/i.exec(url.pathname)?.[1]?.toLowerCase();
    if (extension && extensions.includes(extension)) {
      tracker.event(FILE_DOWNLOAD_EVENT, { url: url.href });
    } else if (options.outbound && url.host !== page.location.host) {
      tracker.event(OUTBOUND_LINK_EVENT, { url: url.href });
    }
  };
  const guarded = (event: ClickEvent) => {
    try {
      onClick(event);
    } catch {
      // never break the host page's links
    }
  };
  page.document.addEventListener('click', guarded, true);
  page.document.addEventListener('auxclick', guarded, true);
}

/** The custom event a page sends when it is the site's "not found" page (the dashboard's Not found list). */
export const NOT_FOUND_EVENT = '404';

/**
 * Sends `404` with the page's path and the referrer that led to it, as the documented script-tag call
 * `tally('event', '404', { path: location.pathname, referrer: document.referrer })` does.
 */
export function trackNotFound(
  tracker: Pick<Tracker, 'event'>,
  page: { location: { pathname: string }; referrer: string },
): void {
  tracker.event(NOT_FOUND_EVENT, { path: page.location.pathname, referrer: page.referrer });
}
