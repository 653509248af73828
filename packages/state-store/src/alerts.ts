// Alert rules per project and their incidents (docs/alerts.md). A rule is a condition on the project's
// figures (a record type that stopped landing, dead letters, a traffic spike or drop, MRR churned in a
// day) with who to tell (member emails, a webhook). What the evaluator last found for a rule is its state;
// an incident is one stretch of time the condition held, with the messages owed for it ("firing", then
// "resolved") per target. A rule is evaluated only under a lease (an atomic `claim`, as the scheduled
// reports take), so of several dashboard processes on one store one decides and sends, and the incident
// it wrote is what the next holder, or a restarted process, reads: an open incident is never fired again.
import { randomBytes } from 'node:crypto';
import type { StateStore } from './state-store.ts';

export const ALERT_KINDS = ['stalled', 'dead_letters', 'traffic', 'mrr_churn'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface AlertRule {
  id: string;
  kind: AlertKind;
  /**
   * stalled: minutes without a landed record of `record_type`; dead_letters: letters in the last hour
   * above which it fires; traffic: percent up (spike) or down (drop); mrr_churn: an amount of money.
   */
  threshold: number;
  /** stalled: pageview, event, identify or revenue. */
  record_type?: string;
  /** traffic: spike or drop. */
  direction?: 'spike' | 'drop';
  /** traffic: the fewest pageviews the week-before hour must have for a comparison. */
  min_baseline?: number;
  /** mrr_churn: the one currency watched; null: each currency against the same amount. */
  currency?: string | null;
  /** Members of the project told by email. */
  emails: string[];
  /** An http(s) URL POSTed a JSON body; null: none. */
  webhook_url: string | null;
  created_by: string;
  created_at: string;
}

export type AlertRuleFields = Omit<AlertRule, 'id' | 'created_at' | 'created_by'>;

/** What the evaluator last found for a rule. */
export interface AlertState {
  status: 'ok' | 'firing' | 'cannot_evaluate';
  /** Firing: when its incident started (ISO 8601). */
  since: string | null;
  /** Firing: what is wrong; cannot_evaluate: why; ok: null or a note. */
  reason: string | null;
  evaluated_at: string;
  /** Messages not yet delivered (they are retried at each evaluation), and the last failure. */
  pending_deliveries: number;
  last_delivery_error: string | null;
}

export type AlertMessageKind = 'firing' | 'resolved';

/** One message owed to one target for an incident. */
export interface AlertDelivery {
  /** `email:<address>` or `webhook`. */
  target: string;
  message: AlertMessageKind;
  sent_at: number | null;
  attempts: number;
  last_error: string | null;
}

export interface AlertIncident {
  id: string;
  project: string;
  rule_id: string;
  /** ms since the epoch */
  started_at: number;
  resolved_at: number | null;
  /** What was wrong when it started, and when it ended. */
  reason: string;
  resolved_reason: string | null;
  deliveries: AlertDelivery[];
}

/** How long an evaluator holds a rule: longer than an evaluation with its deliveries (each bounded). */
export const ALERT_LEASE_MS = 5 * 60_000;

const rules = (project: string) => `alert-rules:${project}`;
const states = (project: string) => `alert-states:${project}`;
const incidents = (project: string) => `alert-incidents:${project}`;
const ruleKey = (project: string, id: string) => `${project}\u001f${id}`;
/** The projects that have rules, so that the evaluator finds them without walking every collection. */
const PROJECTS = 'alert-projects';

export const newAlertId = (): string => randomBytes(6).toString('hex');

export class AlertStore {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** The projects with at least one rule. */
  async projects(): Promise<string[]> {
    return (await this.#store.list<{ project: string }>(PROJECTS)).map((p) => p.project).sort();
  }

  async rules(project: string): Promise<AlertRule[]> {
    return (await this.#store.list<AlertRule>(rules(project))).sort(
      (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
  }

  async rule(project: string, id: string): Promise<AlertRule | null> {
    return this.#store.get<AlertRule>(rules(project), id);
  }

  async addRule(project: string, fields: AlertRuleFields, createdBy: string): Promise<AlertRule> {
    const rule: AlertRule = {
      ...fields,
      id: newAlertId(),
      created_by: createdBy,
      created_at: new Date().toISOString(),
    };
    await this.#store.put(PROJECTS, project, { project });
    await this.#store.put(rules(project), rule.id, rule);
    return rule;
  }

  async replaceRule(project: string, rule: AlertRule): Promise<AlertRule> {
    await this.#store.put(rules(project), rule.id, rule);
    return rule;
  }

  /** Removes the rule with its state and incidents (no message is owed for a rule that is gone). */
  async deleteRule(project: string, id: string): Promise<boolean> {
    if (!(await this.#store.delete(rules(project), id))) return false;
    await this.#store.delete(states(project), id);
    for (const incident of await this.incidents(project, id))
      await this.#store.delete(incidents(project), incident.id);
    if ((await this.#store.list(rules(project))).length === 0) await this.#store.delete(PROJECTS, project);
    return true;
  }

  async state(project: string, id: string): Promise<AlertState | null> {
    return this.#store.get<AlertState>(states(project), id);
  }

  async setState(project: string, id: string, state: AlertState): Promise<void> {
    await this.#store.put(states(project), id, state);
  }

  /** The rule's incidents still open or still owing a message, oldest first. */
  async incidents(project: string, ruleId: string): Promise<AlertIncident[]> {
    return (await this.#store.list<AlertIncident>(incidents(project)))
      .filter((i) => i.rule_id === ruleId)
      .sort((a, b) => a.started_at - b.started_at || a.id.localeCompare(b.id));
  }

  async putIncident(incident: AlertIncident): Promise<void> {
    await this.#store.put(incidents(incident.project), incident.id, incident);
  }

  async deleteIncident(project: string, id: string): Promise<void> {
    await this.#store.delete(incidents(project), id);
  }

  /**
   * Runs `evaluate` for the rule unless another evaluator holds it now (then false). A process that dies
   * holding it leaves the lease to expire; the next evaluation after that takes it.
   */
  async underLease(project: string, id: string, evaluate: () => Promise<void>): Promise<boolean> {
    const key = ruleKey(project, id);
    if (!(await this.#store.claim('alert-leases', key, { at: Date.now() }, ALERT_LEASE_MS))) return false;
    try {
      await evaluate();
    } finally {
      await this.#store.delete('alert-leases', key);
    }
    return true;
  }
}
