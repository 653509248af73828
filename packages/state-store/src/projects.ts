// What the dashboard keeps per project: its settings (the time zone its days are counted in, default
// UTC), its goals (a custom event name or a path pattern) and its funnels (2 to 8 ordered steps).
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
}
