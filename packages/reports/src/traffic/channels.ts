// A visit's source and channel, as docs/traffic.md defines them: the source is the entry pageview's
// utm_source, else its referrer source (given by the client or derived from the referrer's host by the
// analytics consumer), else `Direct / None`; the channel is GA4's default channel grouping of
// (source, medium, campaign, the source's category), reduced to the twelve channels docs/traffic.md lists
// (GA4's Cross-network, Shopping, Audio, SMS, Push and Unassigned become Other).
import { type Channel, DIRECT_SOURCE } from './dimensions.ts';

/** What a visit's entry pageview says of where it came from ('' for absent fields). */
export interface VisitOrigin {
  referrer_source: string;
  /** search, social, email, … as the referrer parser classed the referrer's host ('' when unknown). */
  referrer_medium: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
}

type SourceCategory = 'search' | 'social' | 'video' | 'email' | '';

// Sources named in utm_source (lower case), by category: the best-known names of each kind. A source
// that came from the referrer is classed by the referrer parser instead (referrer_medium).
const CATEGORY_BY_NAME: Record<string, SourceCategory> = {};
for (const [category, names] of Object.entries({
  search:
    'google bing yahoo duckduckgo baidu yandex ecosia brave qwant naver startpage ask aol seznam sogou so.com daum yandex.ru google.com bing.com duckduckgo.com',
  social:
    'facebook fb instagram ig twitter x t.co linkedin lnkd.in reddit pinterest tiktok snapchat threads mastodon bluesky bsky hacker news hackernews news.ycombinator.com quora tumblr vk weibo wechat whatsapp telegram discord slack facebook.com instagram.com linkedin.com reddit.com',
  video: 'youtube youtu.be vimeo twitch dailymotion wistia youtube.com',
  email: 'email e-mail e_mail e mail newsletter mailchimp sendgrid gmail outlook',
} as Record<Exclude<SourceCategory, ''>, string>)) {
  for (const name of names.split(' ')) CATEGORY_BY_NAME[name] = category as SourceCategory;
}
// A few two-word names the space-separated list above cannot hold.
CATEGORY_BY_NAME['hacker news'] = 'social';
CATEGORY_BY_NAME['e mail'] = 'email';

const PAID_MEDIUM = /^(.*cp.*|ppc|retargeting|paid.*)$/;
const DISPLAY_MEDIA = new Set(['display', 'banner', 'expandable', 'interstitial', 'cpm']);
const SOCIAL_MEDIA = new Set([
  'social',
  'social-network',
  'social-media',
  'sm',
  'social network',
  'social media',
]);
const EMAIL_NAMES = new Set(['email', 'e-mail', 'e_mail', 'e mail']);
const REFERRAL_MEDIA = new Set(['referral', 'app', 'link']);

/**
 * The names a referrer's host gets (the referrer parser's, as the analytics consumer stores them), by how a
 * utm_source or a client's referrer_source may spell them: `?utm_source=google` and a visit referred by
 * google.com are one source, Google, not two rows `google` and `Google`.
 */
const SOURCE_NAMES: Record<string, string> = {};
for (const [name, spellings] of Object.entries({
  Google: 'google google.com www.google.com',
  Bing: 'bing bing.com',
  'Yahoo!': 'yahoo yahoo! yahoo.com',
  DuckDuckGo: 'duckduckgo ddg duckduckgo.com',
  Baidu: 'baidu baidu.com',
  Yandex: 'yandex yandex.ru',
  Facebook: 'facebook fb facebook.com',
  Instagram: 'instagram ig instagram.com',
  Twitter: 'twitter x t.co twitter.com x.com',
  LinkedIn: 'linkedin lnkd.in linkedin.com',
  Reddit: 'reddit reddit.com',
  Pinterest: 'pinterest pinterest.com',
  'Hacker News': 'hackernews hn news.ycombinator.com',
  Youtube: 'youtube youtu.be youtube.com',
  Mastodon: 'mastodon',
  Bluesky: 'bluesky bsky bsky.app',
  GitHub: 'github github.com',
  Vimeo: 'vimeo vimeo.com',
  Quora: 'quora quora.com',
  Substack: 'substack substack.com',
})) {
  SOURCE_NAMES[name.toLowerCase()] = name;
  for (const spelling of spellings.split(' ')) SOURCE_NAMES[spelling] = name;
}

/** A source as reports name it: a known source under its one name whatever its case, any other as given. */
const sourceName = (given: string): string => SOURCE_NAMES[given.trim().toLowerCase()] ?? given;

/** The visit's source (docs/traffic.md: `Direct / None` when there is no referrer and no UTM). */
export function sourceOf(origin: VisitOrigin): string {
  const given = origin.utm_source || origin.referrer_source;
  return given ? sourceName(given) : DIRECT_SOURCE;
}

/** The category GA4 gives a source: from the referrer parser for referrers, from known names for UTM. */
function categoryOf(origin: VisitOrigin): SourceCategory {
  if (origin.utm_source) return CATEGORY_BY_NAME[origin.utm_source.toLowerCase()] ?? '';
  const medium = origin.referrer_medium.toLowerCase();
  return medium === 'search' || medium === 'social' || medium === 'video' || medium === 'email' ? medium : '';
}

/** GA4's default channel grouping, in GA4's order of rules, over the channels docs/traffic.md lists. */
export function channelOf(origin: VisitOrigin): Channel {
  const hasUtm = !!(origin.utm_source || origin.utm_medium || origin.utm_campaign);
  if (!hasUtm && !origin.referrer_source) return 'Direct';
  const source = (origin.utm_source || origin.referrer_source).toLowerCase();
  // Without UTM, GA4's medium is `referral` for a referred visit.
  const medium = (hasUtm ? origin.utm_medium : 'referral').toLowerCase();
  const campaign = origin.utm_campaign.toLowerCase();
  const category = categoryOf(origin);
  const paid = PAID_MEDIUM.test(medium);

  if (campaign.includes('cross-network')) return 'Other';
  if (category === 'search' && paid) return 'Paid Search';
  if (category === 'social' && paid) return 'Paid Social';
  if (category === 'video' && paid) return 'Paid Video';
  if (DISPLAY_MEDIA.has(medium)) return 'Display';
  if (paid) return 'Other'; // GA4's Paid Other
  if (category === 'social' || SOCIAL_MEDIA.has(medium)) return 'Organic Social';
  if (category === 'video' || medium.includes('video')) return 'Organic Video';
  if (category === 'search' || medium === 'organic') return 'Organic Search';
  if (EMAIL_NAMES.has(source) || EMAIL_NAMES.has(medium) || category === 'email') return 'Email';
  if (REFERRAL_MEDIA.has(medium)) return 'Referral';
  if (medium === 'affiliate') return 'Affiliates';
  return 'Other';
}
