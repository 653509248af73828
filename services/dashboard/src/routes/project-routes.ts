// Projects, and what is defined per project: its settings (time zone), goals, funnels, annotations and
// saved segments; and, for a
// project without data, its public tokens (to show how to install the tracker). Definitions change only by
// a signed-in user granted the project (access `editor`); read keys and share links read them.

import { isTimeZone, todayIn } from '@tally/reports/calendar';
import { parseFilters } from '@tally/reports/traffic';
import { ALL_PROJECTS, isAnnotationDate, mayManage, roleOf } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import { type Caller, canReadRevenue } from '../access.ts';
import type { DashboardDeps } from '../deps.ts';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { route } from './route.ts';

/** The projects a caller may read (a user granted every project sees those with tokens or settings). */
async function projectsOf(caller: Caller, deps: DashboardDeps): Promise<string[]> {
  switch (caller.kind) {
    case 'read_key':
      return [caller.project];
    case 'share':
      return [caller.share.project];
    case 'user': {
      if (!caller.user.projects.includes(ALL_PROJECTS)) return [...caller.user.projects].sort();
      const tokens = await deps.tokens.list();
      return [...new Set(tokens.filter((t) => !t.revoked_at).map((t) => t.project_id))].sort();
    }
    default:
      throw new UnauthorizedError();
  }
}

function checkTarget(target: { event_name?: string | undefined; path?: string | undefined }): void {
  if ((target.event_name === undefined) === (target.path === undefined)) {
    throw new BadRequestError('a goal or step has exactly one of event_name and path');
  }
}

export function projectRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const projectBody = async (project: string, caller: Caller) => {
    const settings = await deps.projects.settings(project);
    return {
      id: project,
      time_zone: settings.time_zone,
      today: todayIn(settings.time_zone),
      access: {
        kind: caller.kind,
        can_edit: caller.kind === 'user' && mayManage(caller.user, project),
        role: caller.kind === 'user' ? roleOf(caller.user, project) : null,
        revenue: canReadRevenue(caller),
      },
    };
  };

  route(app, deps, 'listProjects', async (request) => {
    const projects = await projectsOf(request.caller, deps);
    return { projects: await Promise.all(projects.map((p) => projectBody(p, request.caller))) };
  });
  route(app, deps, 'getProject', async (request) => projectBody(request.params.project, request.caller));
  route(app, deps, 'updateProject', async (request) => {
    const { time_zone } = request.body;
    if (!isTimeZone(time_zone))
      throw new BadRequestError('time_zone must be an IANA time zone (Europe/Berlin)');
    await deps.projects.updateSettings(request.params.project, { time_zone });
    return projectBody(request.params.project, request.caller);
  });

  route(app, deps, 'getInstall', async (request) => {
    const project = request.params.project;
    const [row] = await deps.warehouse.query<{ n: number }>(
      'SELECT count() AS n FROM (SELECT 1 FROM visits WHERE project_id = {project:String} LIMIT 1)',
      { project },
    );
    const tokens = (await deps.tokens.list()).filter(
      (t) => t.project_id === project && t.kind === 'public' && !t.revoked_at,
    );
    const configured = deps.config.GATEWAY_PUBLIC_URL?.replace(/\/+$/, '');
    return {
      has_data: (row?.n ?? 0) > 0,
      gateway_url: configured ?? `${request.protocol}://${hostOnly(request.hostname)}:${deps.config.PORT}`,
      public_tokens: tokens.map((t) => ({ id: t.id, hint: t.hint, created_at: t.created_at })),
    };
  });
  route(app, deps, 'createPublicToken', async (request, reply) => {
    const { token, info } = await deps.tokens.create(request.params.project, 'public');
    return reply.code(201).send({ id: info.id, token });
  });

  route(app, deps, 'listGoals', async (request) => ({
    goals: await deps.projects.goals(request.params.project),
  }));
  route(app, deps, 'createGoal', async (request, reply) => {
    const input = request.body;
    checkTarget(input);
    return reply.code(201).send(await deps.projects.addGoal(request.params.project, input));
  });
  route(app, deps, 'deleteGoal', async (request, reply) => {
    if (!(await deps.projects.deleteGoal(request.params.project, request.params.goal))) {
      throw new NotFoundError('no such goal');
    }
    return reply.code(204).send();
  });

  const author = (caller: Caller) => (caller.kind === 'user' ? caller.user.email : caller.kind);
  route(app, deps, 'listAnnotations', async (request) => ({
    annotations: await deps.projects.annotations(request.params.project),
  }));
  route(app, deps, 'createAnnotation', async (request, reply) => {
    const { date, text } = request.body;
    if (!isAnnotationDate(date)) throw new BadRequestError(`date ${date} is not a day or an instant`);
    if (!text.trim()) throw new BadRequestError('text must not be blank');
    const note = { date, text: text.trim(), created_by: author(request.caller) };
    return reply.code(201).send(await deps.projects.addAnnotation(request.params.project, note));
  });
  route(app, deps, 'deleteAnnotation', async (request, reply) => {
    if (!(await deps.projects.deleteAnnotation(request.params.project, request.params.annotation))) {
      throw new NotFoundError('no such annotation');
    }
    return reply.code(204).send();
  });

  route(app, deps, 'listSegments', async (request) => ({
    segments: await deps.projects.segments(request.params.project),
  }));
  route(app, deps, 'createSegment', async (request, reply) => {
    const { name, filters } = request.body;
    // A FilterSyntaxError is answered 400 with its message (errors.ts), as on the traffic operations.
    if (parseFilters(filters).length === 0) throw new BadRequestError('filters must hold a filter');
    const segment = { name: name.trim() || name, filters, created_by: author(request.caller) };
    return reply.code(201).send(await deps.projects.addSegment(request.params.project, segment));
  });
  route(app, deps, 'deleteSegment', async (request, reply) => {
    if (!(await deps.projects.deleteSegment(request.params.project, request.params.segment))) {
      throw new NotFoundError('no such segment');
    }
    return reply.code(204).send();
  });

  route(app, deps, 'listFunnels', async (request) => ({
    funnels: await deps.projects.funnels(request.params.project),
  }));
  route(app, deps, 'createFunnel', async (request, reply) => {
    const input = request.body;
    for (const step of input.steps) checkTarget(step);
    return reply.code(201).send(await deps.projects.addFunnel(request.params.project, input));
  });
  route(app, deps, 'deleteFunnel', async (request, reply) => {
    if (!(await deps.projects.deleteFunnel(request.params.project, request.params.funnel))) {
      throw new NotFoundError('no such funnel');
    }
    return reply.code(204).send();
  });
}

/** The host of a Host header's name (an IPv6 address keeps its brackets). */
function hostOnly(hostname: string): string {
  return hostname.startsWith('[')
    ? hostname.slice(0, hostname.indexOf(']') + 1)
    : hostname.replace(/:\d+$/, '');
}
