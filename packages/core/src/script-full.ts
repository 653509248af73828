// Entry of the full script-tag bundle (tally.full.js, served at GET /tally.full.js): the base script plus
// the optional features of extras.ts, turned on by the tag's attributes:
//   data-hash-routing         the site routes by hash (`/#/pricing`): hash changes are pageviews
//   data-outbound-links       clicks on links to other sites, as `Outbound Link: Click` events
//   data-file-downloads       clicks on links to files (`="pdf,zip"`: those extensions), as `File Download`
//   data-exclude="/admin/**, /preview/*"   pages whose path matches send nothing
//   data-respect-dnt          browsers with Do Not Track or Global Privacy Control send nothing
//   data-404                  this is the site's "not found" page: a `404` event with its path and referrer
import { hintLocalPage, routeByHash } from './browser.ts';
import { privacyFilter, trackLinks, trackNotFound } from './extras.ts';
import { flag, scriptData, startFromScriptTag } from './script-tag.ts';

const list = (value: string | undefined) => value?.split(/[\s,]+/).filter(Boolean);

const data = scriptData() ?? {};
const hashRouting = flag(data.hashRouting);
if (hashRouting) routeByHash(); // before the first pageview
if (data.token) hintLocalPage(flag(data.allowLocalhost), 'the attribute data-allow-localhost');
const tracker = startFromScriptTag(
  privacyFilter({ respectDoNotTrack: flag(data.respectDnt), exclude: list(data.exclude), hashRouting }),
);
const value = data.fileDownloads;
const downloads = value && value !== 'true' && value !== 'false' ? list(value) : flag(value);
const outbound = flag(data.outboundLinks);
if (tracker && (outbound || downloads)) trackLinks(tracker, { outbound, downloads });
// The 404 event after the first pageview, as the documented `tally('event', '404', …)` after the tag.
const page = globalThis as unknown as { location: { pathname: string }; document: { referrer: string } };
if (tracker && flag(data['404']))
  trackNotFound(tracker, { location: page.location, referrer: page.document.referrer });
