// What an alert says, by email and to a webhook (docs/alerts.md): the same facts in both, the project,
// the rule, "firing" or "resolved", why, since when, and a link to the project's Health view. The
// webhook's body is Slack-compatible (`text`) with Tally's own fields under `tally`; the email has a
// plain-text part and an HTML part (every value escaped).
import { escapeHtml } from '@tally/mail';
import type { AlertIncident, AlertMessageKind, AlertRule } from '@tally/state-store';
import { describeRule } from './conditions.ts';

/** The JSON body POSTed to a rule's webhook (documented in docs/alerts.md). */
export interface AlertWebhookBody {
  text: string;
  tally: {
    event: AlertMessageKind;
    project: string;
    rule: { id: string; kind: AlertRule['kind']; threshold: number; description: string };
    incident: { id: string; started_at: string; resolved_at: string | null };
    reason: string;
    url: string;
  };
}

export interface AlertEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function healthUrl(dashboardUrl: string, project: string): string {
  return `${dashboardUrl.replace(/\/$/, '')}/projects/${encodeURIComponent(project)}/health`;
}

function facts(rule: AlertRule, incident: AlertIncident, message: AlertMessageKind, dashboardUrl: string) {
  const description = describeRule(rule);
  const reason =
    message === 'resolved' ? (incident.resolved_reason ?? 'the condition no longer holds') : incident.reason;
  const headline =
    message === 'firing'
      ? `Firing: ${incident.project}: ${description}`
      : `Resolved: ${incident.project}: ${description}`;
  const when =
    message === 'firing'
      ? `since ${iso(incident.started_at)}`
      : `from ${iso(incident.started_at)} to ${iso(incident.resolved_at)}`;
  return { description, reason, headline, when, url: healthUrl(dashboardUrl, incident.project) };
}

export function alertWebhookBody(
  rule: AlertRule,
  incident: AlertIncident,
  message: AlertMessageKind,
  dashboardUrl: string,
): AlertWebhookBody {
  const f = facts(rule, incident, message, dashboardUrl);
  return {
    text: `[Tally] ${f.headline} (${f.when}). ${f.reason}. ${f.url}`,
    tally: {
      event: message,
      project: incident.project,
      rule: { id: rule.id, kind: rule.kind, threshold: rule.threshold, description: f.description },
      incident: {
        id: incident.id,
        started_at: iso(incident.started_at) as string,
        resolved_at: iso(incident.resolved_at),
      },
      reason: f.reason,
      url: f.url,
    },
  };
}

export function alertEmail(
  rule: AlertRule,
  incident: AlertIncident,
  message: AlertMessageKind,
  to: string,
  dashboardUrl: string,
): AlertEmail {
  const f = facts(rule, incident, message, dashboardUrl);
  const text = [
    f.headline,
    '',
    `${message === 'firing' ? 'Firing' : 'Resolved'} ${f.when}.`,
    `${f.reason}.`,
    '',
    `Health of ${incident.project}: ${f.url}`,
    '',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1f2937">',
    `<h1 style="font-size:18px">${escapeHtml(f.headline)}</h1>`,
    `<p>${escapeHtml(`${message === 'firing' ? 'Firing' : 'Resolved'} ${f.when}.`)}</p>`,
    `<p>${escapeHtml(`${f.reason}.`)}</p>`,
    `<p><a href="${escapeHtml(f.url)}">Health of ${escapeHtml(incident.project)}</a></p>`,
    '</body></html>',
  ].join('\n');
  return { to, subject: `[Tally] ${f.headline}`, text, html };
}
