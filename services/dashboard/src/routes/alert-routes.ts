// GET/POST …/alerts, PATCH/DELETE …/alerts/{alert}: a project's alert rules (docs/alerts.md), read by any
// member, changed by its owners and admins (access `editor`). A rule is checked as a whole (alerts/rules.ts)
// against the project's members, and listed with what the evaluator last found for it (its state), firing
// rules first; a viewer sees a webhook's origin only.
import { type AlertRule, type AlertState, mayManage } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import { describeRule } from '../alerts/conditions.ts';
import { checkAlertRule } from '../alerts/rules.ts';
import type { DashboardDeps } from '../deps.ts';
import { NotFoundError } from '../errors.ts';
import { route } from './route.ts';

/** The state of a rule not evaluated yet. */
const PENDING = {
  status: 'pending',
  since: null,
  reason: 'not evaluated yet',
  evaluated_at: null,
  pending_deliveries: 0,
  last_delivery_error: null,
} as const;

const shown = (rule: AlertRule, state: AlertState | null, redact = false) => ({
  ...rule,
  // A webhook URL is a credential (a Slack one posts to the channel): only who may change the rule sees it.
  webhook_url: rule.webhook_url && redact ? `${new URL(rule.webhook_url).origin}/…` : rule.webhook_url,
  description: describeRule(rule),
  state: state ?? PENDING,
});

export function alertRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const members = async (project: string) => new Set((await deps.users.members(project)).map((m) => m.email));

  route(app, deps, 'listAlerts', async (request) => {
    const project = request.params.project;
    const caller = request.caller;
    const redact = !(caller.kind === 'user' && mayManage(caller.user, project));
    const rules = await Promise.all(
      (await deps.alerts.rules(project)).map(async (rule) =>
        shown(rule, await deps.alerts.state(project, rule.id), redact),
      ),
    );
    // Firing first (longest first), then the rest in the order they were made.
    const firing = (r: (typeof rules)[number]) =>
      r.state.status === 'firing' ? (r.state.since ?? '') : null;
    return {
      rules: rules.sort((a, b) => {
        const fa = firing(a);
        const fb = firing(b);
        if (fa !== null && fb !== null) return fa.localeCompare(fb);
        return fa !== null ? -1 : fb !== null ? 1 : 0;
      }),
    };
  });

  route(app, deps, 'createAlert', async (request, reply) => {
    const project = request.params.project;
    const fields = checkAlertRule(request.body, await members(project));
    const caller = request.caller;
    const rule = await deps.alerts.addRule(
      project,
      fields,
      caller.kind === 'user' ? caller.user.email : 'api',
    );
    return reply.code(201).send(shown(rule, null));
  });

  route(app, deps, 'updateAlert', async (request) => {
    const { project, alert } = request.params;
    const stored = await deps.alerts.rule(project, alert);
    if (!stored) throw new NotFoundError('no such alert rule');
    const fields = checkAlertRule({ ...stored, ...request.body }, await members(project));
    const { id, created_by, created_at } = stored;
    const rule = await deps.alerts.replaceRule(project, { ...fields, id, created_by, created_at });
    return shown(rule, await deps.alerts.state(project, alert));
  });

  route(app, deps, 'deleteAlert', async (request, reply) => {
    const { project, alert } = request.params;
    if (!(await deps.alerts.deleteRule(project, alert))) throw new NotFoundError('no such alert rule');
    return reply.code(204).send();
  });
}
