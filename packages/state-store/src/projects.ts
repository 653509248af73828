// What the dashboard keeps per project: its settings (the time zone its days are counted in, default
// UTC), its goals (a custom event name or a path pattern), its funnels (2 to 8 ordered steps), its
// annotations (a dated note: a deploy, a campaign) and its saved segments (a named traffic filter string).
import { randomBytes } from 'node:crypto';
import type { StateStore } from './state-store.ts';

export interface ProjectSettings {
  time_zone: string;
}

export interface GoalTarget {
  event_name?: string;
  path?: string;
}
export interface Goal extends GoalTarget {
  id: string;
  name: string;
  created_at: string;
}
export interface FunnelStep extends GoalTarget {
  name?: string;
}
export interface Funnel {
  id: string;
  name: string;
  steps: FunnelStep[];
  created_at: string;
}

export interface Annotation {
  id: string;
  /** A day (YYYY-MM-DD, in the project's time zone) or an ISO 8601 timestamp. */
  date: string;
  text: string;
  /** The user's email, or `cli` when added with `tally annotations add`. */
  created_by: string;
  created_at: string;
}
export interface Segment {
  id: string;
  name: string;
  /** A traffic filter string, as the API's `filters` parameter. */
  filters: string;
  created_by: string;
  created_at: string;
}

/** A day (YYYY-MM-DD) or an ISO 8601 timestamp with a time zone (Z or ±hh:mm). */
export const ANNOTATION_DATE_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:[0-9]{2}))?$';
const ANNOTATION_DATE = new RegExp(ANNOTATION_DATE_PATTERN);

/** Whether `date` is a real day or instant in the annotation's form (2026-02-30 is not). */
export function isAnnotationDate(date: string): boolean {
  if (!ANNOTATION_DATE.test(date)) return false;
  const day = date.slice(0, 10);
  const parsed = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== day) return false;
  return date.length === 10 || !Number.isNaN(new Date(date).getTime());
}

export const DEFAULT_SETTINGS: ProjectSettings = { time_zone: 'UTC' };

const newId = () => randomBytes(6).toString('hex');

export class ProjectStore {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async settings(project: string): Promise<ProjectSettings> {
    return { ...DEFAULT_SETTINGS, ...(await this.#store.get<ProjectSettings>('project_settings', project)) };
  }

  async updateSettings(project: string, settings: Partial<ProjectSettings>): Promise<ProjectSettings> {
    const next = { ...(await this.settings(project)), ...settings };
    await this.#store.put('project_settings', project, next);
    return next;
  }

  async goals(project: string): Promise<Goal[]> {
    return (await this.#store.list<Goal>(`goals:${project}`)).sort(
      (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
  }

  async addGoal(project: string, goal: Omit<Goal, 'id' | 'created_at'>): Promise<Goal> {
    const stored: Goal = { ...goal, id: newId(), created_at: new Date().toISOString() };
    await this.#store.put(`goals:${project}`, stored.id, stored);
    return stored;
  }

  async deleteGoal(project: string, id: string): Promise<boolean> {
    return this.#store.delete(`goals:${project}`, id);
  }

  async funnels(project: string): Promise<Funnel[]> {
    return (await this.#store.list<Funnel>(`funnels:${project}`)).sort(
      (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
  }

  async funnel(project: string, id: string): Promise<Funnel | null> {
    return this.#store.get<Funnel>(`funnels:${project}`, id);
  }

  async addFunnel(project: string, funnel: Omit<Funnel, 'id' | 'created_at'>): Promise<Funnel> {
    const stored: Funnel = { ...funnel, id: newId(), created_at: new Date().toISOString() };
    await this.#store.put(`funnels:${project}`, stored.id, stored);
    return stored;
  }

  async deleteFunnel(project: string, id: string): Promise<boolean> {
    return this.#store.delete(`funnels:${project}`, id);
  }

  /** Oldest date first (a day sorts before the instants of that day). */
  async annotations(project: string): Promise<Annotation[]> {
    return (await this.#store.list<Annotation>(`annotations:${project}`)).sort(
      (a, b) =>
        a.date.localeCompare(b.date) || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
  }

  async addAnnotation(project: string, note: Omit<Annotation, 'id' | 'created_at'>): Promise<Annotation> {
    const stored: Annotation = { ...note, id: newId(), created_at: new Date().toISOString() };
    await this.#store.put(`annotations:${project}`, stored.id, stored);
    return stored;
  }

  async deleteAnnotation(project: string, id: string): Promise<boolean> {
    return this.#store.delete(`annotations:${project}`, id);
  }

  async segments(project: string): Promise<Segment[]> {
    return (await this.#store.list<Segment>(`segments:${project}`)).sort(
      (a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
    );
  }

  async addSegment(project: string, segment: Omit<Segment, 'id' | 'created_at'>): Promise<Segment> {
    const stored: Segment = { ...segment, id: newId(), created_at: new Date().toISOString() };
    await this.#store.put(`segments:${project}`, stored.id, stored);
    return stored;
  }

  async deleteSegment(project: string, id: string): Promise<boolean> {
    return this.#store.delete(`segments:${project}`, id);
  }
}
