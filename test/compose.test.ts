// docker-compose.yml cannot run here (no Docker engine), so this checks what can be checked: it parses,
// its versions and settings match infra/ (what the tests run against), and the gateway's environment,
// ports and health check agree with the code's configuration.
import { readFileSync } from 'node:fs';
import { ConfigSchema, loadConfig } from '@tally/config';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from './support/processes.ts';

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8')) as {
  services: Record<string, ComposeService>;
};
const versions = Object.fromEntries(
  readFileSync(`${ROOT}infra/versions.env`, 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.split('=') as [string, string]),
);

it('runs the Redis version and persistence settings that infra/ runs', () => {
  const redis = compose.services.redis as ComposeService;
  expect(redis.image).toBe(`redis:${versions.REDIS_VERSION}-bookworm`);
  const infraStart = readFileSync(`${ROOT}infra/redis/start.sh`, 'utf8');
  for (const flag of ['--appendonly yes', '--appendfsync everysec']) {
    expect(infraStart).toContain(flag);
    expect(redis.command?.join(' ')).toContain(flag);
  }
  const setup = readFileSync(`${ROOT}test/setup/services.ts`, 'utf8');
  expect(setup).toContain(`'redis:${versions.REDIS_VERSION}-bookworm'`);
});

it('gives the gateway only settings the code knows, with values its config schema accepts', () => {
  const gateway = compose.services.gateway as ComposeService;
  const env = gateway.environment ?? {};
  const known = Object.keys(ConfigSchema.properties);
  for (const key of Object.keys(env)) expect(known, `unknown setting ${key}`).toContain(key);
  const config = loadConfig(env);
  expect(gateway.ports).toContain(`${config.PORT}:${config.PORT}`);
  expect(gateway.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${config.ADMIN_PORT}/readyz`);
  expect(config.REDIS_URL).toBe('redis://redis:6379');
  expect(gateway.depends_on?.redis?.condition).toBe('service_healthy');
  // The admin port is for the compose network (Prometheus), never published.
  expect(gateway.ports?.some((p) => p.includes(String(config.ADMIN_PORT)))).toBe(false);
});
