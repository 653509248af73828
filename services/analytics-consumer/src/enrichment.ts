// What the analytics consumer adds to a record before it lands: browser, OS and device from the
// User-Agent (bowser, MIT), a bot flag (isbot, its pattern list kept up to date by its maintainers), and
// the referrer's source and medium from its host when the client left referrer_source out
// (@tryghost/referrer-parser, MIT: Ghost's list of known search engines, social networks and mail apps).
import { parse as parseReferrer } from '@tryghost/referrer-parser';
import Bowser from 'bowser';
import { isbot } from 'isbot';

export interface UserAgentInfo {
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
  /** desktop, mobile, tablet, tv, or '' when unknown. */
  device_type: string;
  is_bot: boolean;
}

const UNKNOWN_AGENT: UserAgentInfo = {
  browser: '',
  browser_version: '',
  os: '',
  os_version: '',
  device_type: '',
  is_bot: false,
};

/**
 * A bounded memo of a pure function of strings: real traffic repeats a few thousand User-Agents and
 * referrers, and parsing them is the consumers' most expensive step. Emptied when full, so memory stays
 * bounded whatever clients send.
 */
function memoize<T>(compute: (key: string) => T, maxEntries = 10_000): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = compute(key);
      if (cache.size >= maxEntries) cache.clear();
      cache.set(key, value);
    }
    return value;
  };
}

const parseUserAgent = memoize((userAgent: string): UserAgentInfo => {
  const parsed = Bowser.parse(userAgent);
  return {
    browser: parsed.browser.name ?? '',
    browser_version: parsed.browser.version ?? '',
    os: parsed.os.name ?? '',
    os_version: parsed.os.versionName ?? parsed.os.version ?? '',
    device_type: parsed.platform.type ?? '',
    is_bot: isbot(userAgent),
  };
});

export function describeUserAgent(userAgent: string | null | undefined): UserAgentInfo {
  return userAgent ? parseUserAgent(userAgent) : UNKNOWN_AGENT;
}

export interface ReferrerInfo {
  /** Google, Twitter, Hacker News, … or the referring host; '' for direct and internal visits. */
  referrer_source: string;
  /** search, social, email, … or '' when unknown. */
  referrer_medium: string;
}

/**
 * The source of a visit. The client's own referrer_source wins; otherwise it is derived from the
 * referrer URL, and a referrer on the page's own site (internal navigation) is no source.
 */
export function referrerOf(
  referrer: string | null | undefined,
  pageUrl: string | null | undefined,
  clientSource: string | null | undefined,
): ReferrerInfo {
  // The parser sorts its whole list of known referrers on every call: each (site, referrer) is parsed once.
  const derived = referrer ? parseReferrerOf(`${pageUrl ? siteOf(pageUrl) : ''}\u0000${referrer}`) : null;
  return {
    referrer_source: clientSource || (derived?.referrerSource ?? ''),
    referrer_medium: derived?.referrerMedium ?? '',
  };
}

// Keyed by the page's origin (which cannot hold a NUL), a NUL, then the referrer as the client sent it.
const parseReferrerOf = memoize((siteAndReferrer: string) => {
  const split = siteAndReferrer.indexOf('\u0000');
  const site = siteAndReferrer.slice(0, split);
  const { referrerSource, referrerMedium } = parseReferrer(
    siteAndReferrer.slice(split + 1),
    site ? { siteUrl: site } : {},
  );
  return { referrerSource, referrerMedium };
});

function siteOf(pageUrl: string): string {
  try {
    return new URL(pageUrl).origin;
  } catch {
    return '';
  }
}

export function hostnameOf(url: string | null | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
