// The alert evaluator, in the dashboard process (docs/alerts.md): each tick (ALERTS_INTERVAL_MS) goes over
// the projects' rules and, for each rule, under the rule's lease in the state store (AlertStore.underLease:
// of several dashboard processes one evaluates it; a restart reads what was written), tells whether its
// condition holds (conditions.ts), opens an incident when it starts to hold and resolves it when it stops,
// and delivers what is owed: one "firing" and one "resolved" message per incident to each target (the
// rule's member emails, its webhook). A delivery that fails stays owed and is tried again at the next tick;
// targets are delivered to side by side, each bounded (the webhook's timeout, the mailer's own), so one
// failing target never holds up the others. `tick` takes the clock, so tests choose the instant.
import type { MailMessage } from '@tally/mail';
import {
  type AlertDelivery,
  type AlertIncident,
  type AlertRule,
  type AlertState,
  type AlertStore,
  newAlertId,
  type Users,
} from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import type { Logger } from 'pino';
import type { HealthLog } from '../deps.ts';
import { type Condition, evaluateCondition } from './conditions.ts';
import { alertEmail, alertWebhookBody } from './messages.ts';

export interface AlertEvaluatorDeps {
  warehouse: Warehouse;
  log?: HealthLog | undefined;
  users: Pick<Users, 'members'>;
  alerts: AlertStore;
  /** Sends one email; throws when it could not (or when no SMTP server is configured). */
  sendEmail(message: MailMessage): Promise<void>;
  webhookTimeoutMs: number;
  dashboardUrl: string;
  logger: Logger;
}

export interface AlertTickResult {
  evaluated: number;
  /** Messages delivered by this tick, and those that failed (owed for the next one). */
  delivered: number;
  failed: number;
}

export interface AlertEvaluator {
  tick(now?: number): Promise<AlertTickResult>;
  stop(): Promise<void>;
}

const WEBHOOK = 'webhook';
const emailTarget = (email: string) => `email:${email}`;

/** POSTs the body as JSON; throws unless answered 2xx within the timeout. */
async function postWebhook(url: string, body: unknown, timeoutMs: number): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Tally-Alerts/1' },
    body: JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.body?.cancel();
  if (response.status < 200 || response.status > 299)
    throw new Error(`the webhook answered ${response.status}`);
}

const errorText = (error: unknown): string =>
  error instanceof Error && error.name === 'TimeoutError'
    ? 'the webhook did not answer in time'
    : error instanceof Error
      ? error.message
      : String(error);

export function alertEvaluator(deps: AlertEvaluatorDeps): AlertEvaluator {
  let running: Promise<AlertTickResult> = Promise.resolve({ evaluated: 0, delivered: 0, failed: 0 });
  let stopped = false;

  /** Sends one message to one target; the delivery records the outcome. */
  const deliver = async (
    rule: AlertRule,
    incident: AlertIncident,
    delivery: AlertDelivery,
    now: number,
  ): Promise<boolean> => {
    delivery.attempts += 1;
    try {
      if (delivery.target === WEBHOOK) {
        if (!rule.webhook_url) throw new Error('the rule has no webhook');
        const body = alertWebhookBody(rule, incident, delivery.message, deps.dashboardUrl);
        await postWebhook(rule.webhook_url, body, deps.webhookTimeoutMs);
      } else {
        const to = delivery.target.slice('email:'.length);
        await deps.sendEmail(alertEmail(rule, incident, delivery.message, to, deps.dashboardUrl));
      }
      delivery.sent_at = now;
      delivery.last_error = null;
      return true;
    } catch (error) {
      delivery.last_error = errorText(error);
      deps.logger.warn(
        { err: error, project: incident.project, rule: rule.id, target: delivery.target },
        'an alert could not be delivered; it is tried again at the next evaluation',
      );
      return false;
    }
  };

  /** Delivers what the incident owes: per target in order (firing before resolved), targets side by side. */
  const deliverOwed = async (
    rule: AlertRule,
    incident: AlertIncident,
    targets: ReadonlySet<string>,
    now: number,
    result: AlertTickResult,
  ): Promise<void> => {
    // A target no longer on the rule (an email removed, a member gone) is owed nothing more.
    incident.deliveries = incident.deliveries.filter((d) => d.sent_at !== null || targets.has(d.target));
    const byTarget = new Map<string, AlertDelivery[]>();
    for (const d of incident.deliveries) byTarget.set(d.target, [...(byTarget.get(d.target) ?? []), d]);
    await Promise.all(
      [...byTarget.values()].map(async (owed) => {
        for (const d of owed) {
          if (d.sent_at !== null) continue;
          if (await deliver(rule, incident, d, now)) result.delivered += 1;
          else {
            result.failed += 1;
            return;
          }
        }
      }),
    );
  };

  const evaluateRule = async (
    project: string,
    rule: AlertRule,
    members: ReadonlySet<string>,
    now: number,
    result: AlertTickResult,
  ): Promise<void> => {
    let condition: Condition;
    try {
      condition = await evaluateCondition(rule, project, deps, now);
    } catch (error) {
      deps.logger.warn({ err: error, project, rule: rule.id }, 'an alert rule could not be evaluated');
      condition = { status: 'cannot_evaluate', reason: 'the warehouse did not answer' };
    }
    const targets = new Set([
      ...rule.emails.filter((e) => members.has(e)).map(emailTarget),
      ...(rule.webhook_url ? [WEBHOOK] : []),
    ]);
    const owe = (message: AlertDelivery['message']): AlertDelivery[] =>
      [...targets].map((target) => ({ target, message, sent_at: null, attempts: 0, last_error: null }));
    const incidents = await deps.alerts.incidents(project, rule.id);
    let open = incidents.find((i) => i.resolved_at === null);
    if (condition.status === 'firing' && !open) {
      open = {
        id: newAlertId(),
        project,
        rule_id: rule.id,
        started_at: now,
        resolved_at: null,
        reason: condition.reason,
        resolved_reason: null,
        deliveries: owe('firing'),
      };
      incidents.push(open);
      deps.logger.info({ project, rule: rule.id, reason: condition.reason }, 'alert firing');
    } else if (condition.status === 'ok' && open) {
      open.resolved_at = now;
      open.resolved_reason = condition.reason ?? 'the condition no longer holds';
      open.deliveries.push(...owe('resolved'));
      deps.logger.info({ project, rule: rule.id }, 'alert resolved');
      open = undefined;
    }
    for (const incident of incidents) {
      await deliverOwed(rule, incident, targets, now, result);
      const done = incident.resolved_at !== null && incident.deliveries.every((d) => d.sent_at !== null);
      if (done) await deps.alerts.deleteIncident(project, incident.id);
      else await deps.alerts.putIncident(incident);
    }
    const owed = incidents.flatMap((i) => i.deliveries).filter((d) => d.sent_at === null);
    const state: AlertState = {
      status: condition.status === 'cannot_evaluate' ? 'cannot_evaluate' : open ? 'firing' : 'ok',
      since: open ? new Date(open.started_at).toISOString() : null,
      reason: condition.reason,
      evaluated_at: new Date(now).toISOString(),
      pending_deliveries: owed.length,
      last_delivery_error: owed.find((d) => d.last_error !== null)?.last_error ?? null,
    };
    await deps.alerts.setState(project, rule.id, state);
  };

  const evaluateAll = async (now: number): Promise<AlertTickResult> => {
    const result: AlertTickResult = { evaluated: 0, delivered: 0, failed: 0 };
    for (const project of await deps.alerts.projects()) {
      const rules = await deps.alerts.rules(project);
      if (rules.length === 0) continue;
      const members = new Set((await deps.users.members(project)).map((m) => m.email));
      for (const rule of rules) {
        if (stopped) return result;
        try {
          const held = await deps.alerts.underLease(project, rule.id, () =>
            evaluateRule(project, rule, members, now, result),
          );
          if (held) result.evaluated += 1;
        } catch (error) {
          deps.logger.warn({ err: error, project, rule: rule.id }, 'evaluating an alert rule failed');
        }
      }
    }
    return result;
  };

  return {
    tick(now = Date.now()) {
      running = running
        .catch(() => ({ evaluated: 0, delivered: 0, failed: 0 }))
        .then(() => (stopped ? { evaluated: 0, delivered: 0, failed: 0 } : evaluateAll(now)));
      return running;
    },
    stop() {
      stopped = true;
      return running.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

/** The evaluator ticking every `intervalMs` until stopped (the dashboard process). */
export function startAlertEvaluator(deps: AlertEvaluatorDeps, intervalMs: number): AlertEvaluator {
  const evaluator = alertEvaluator(deps);
  const timer = setInterval(() => {
    evaluator
      .tick()
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'the alert evaluator failed'));
  }, intervalMs);
  timer.unref();
  return {
    tick: evaluator.tick,
    stop() {
      clearInterval(timer);
      return evaluator.stop();
    },
  };
}
