// Scheduled email reports: which members of a project want its weekly and/or monthly report (one document
// per member in a collection per project), and the once-per-period delivery of each report. Delivery takes
// a short lease (an atomic `claim`, so of several dashboard processes one sends) and, once sent, leaves a
// "sent" marker keyed by (project, member, kind, period): a restart, another replica or a later tick in the
// same period finds the marker and sends nothing; a process that died while sending leaves only the lease,
// which expires, and the next tick sends.
import type { StateStore } from './state-store.ts';

export type ReportKind = 'weekly' | 'monthly';

export interface ReportSubscription {
  email: string;
  weekly: boolean;
  monthly: boolean;
}

/** How long a sender holds a report before another may try again (it died while sending). */
export const REPORT_LEASE_MS = 10 * 60_000;
/** How long a "sent" marker is kept: longer than any period, so a period is never sent twice. */
export const REPORT_SENT_MS = 400 * 86_400_000;

const subscriptions = (project: string) => `report-subscriptions:${project}`;
const deliveryKey = (project: string, email: string, kind: ReportKind, period: string) =>
  `${project}\u001f${email.toLowerCase()}\u001f${kind}\u001f${period}`;

export class ReportSubscriptions {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** The member's choice for the project (both off when never set). */
  async get(project: string, email: string): Promise<ReportSubscription> {
    const address = email.toLowerCase();
    return (
      (await this.#store.get<ReportSubscription>(subscriptions(project), address)) ?? {
        email: address,
        weekly: false,
        monthly: false,
      }
    );
  }

  async set(
    project: string,
    email: string,
    choice: { weekly: boolean; monthly: boolean },
  ): Promise<ReportSubscription> {
    const subscription = { email: email.toLowerCase(), weekly: choice.weekly, monthly: choice.monthly };
    if (!subscription.weekly && !subscription.monthly)
      await this.#store.delete(subscriptions(project), subscription.email);
    else await this.#store.put(subscriptions(project), subscription.email, subscription);
    return subscription;
  }

  /** The project's members who want at least one report. */
  async list(project: string): Promise<ReportSubscription[]> {
    return (await this.#store.list<ReportSubscription>(subscriptions(project))).sort((a, b) =>
      a.email.localeCompare(b.email),
    );
  }

  /**
   * Runs `send` for the member's report of the period unless it was sent already or another sender holds
   * it now; true when this call sent it. A `send` that throws leaves the lease to expire (a retry later).
   */
  async deliverOnce(
    project: string,
    email: string,
    kind: ReportKind,
    period: string,
    send: () => Promise<void>,
  ): Promise<boolean> {
    const key = deliveryKey(project, email, kind, period);
    if ((await this.#store.get('report-sent', key)) !== null) return false;
    if (!(await this.#store.claim('report-leases', key, { at: Date.now() }, REPORT_LEASE_MS))) return false;
    // Sent between the check and the claim by a sender whose lease has just been deleted.
    if ((await this.#store.get('report-sent', key)) !== null) return false;
    await send();
    await this.#store.put('report-sent', key, { at: Date.now() }, REPORT_SENT_MS);
    await this.#store.delete('report-leases', key);
    return true;
  }
}
