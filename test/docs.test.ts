// Docs that match the behaviour: the README's configuration table is the one the config schema gives
// (npm run docs:generate writes it), so every setting is there with its default and its description.
// Docs that stay inside the repository: the definitions Tally implements are docs/api.md, docs/traffic.md and
// docs/revenue.md, so nothing may cite the outside documents they replaced, and every relative link of the
// Markdown files (README, ARCHITECTURE, docs/, the packages' READMEs …) reaches a file, and a heading there.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { configurationTable, withConfigurationTable } from '@tally/config/readme-table';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

it('holds the configuration table the config schema gives (npm run docs:generate)', () => {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  expect(readme).toBe(withConfigurationTable(readme));
  expect(readme).toContain('| `TALLY_READY_FILE` | — |');
  expect(readme).toContain('| `PORT` | `8080` | Port of the public ingest API. |');
  expect(configurationTable().split('\n').length).toBeGreaterThan(30);
});

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);

/** The repository's files (tracked or not, unless ignored), outside node_modules, dist and .git. */
function repositoryFiles(): string[] {
  let files: string[];
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    files = listed.split('\0').filter(Boolean);
  } catch {
    // No git (a copy without its history): every file under the root.
    files = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (!SKIPPED_DIRS.has(entry.name)) walk(path);
        } else if (entry.isFile()) files.push(path);
      }
    };
    walk('');
  }
  return files.filter(
    (file) => !file.split('/').some((part) => SKIPPED_DIRS.has(part)) && existsSync(join(ROOT, file)),
  );
}

/** A text file's content, or null for a binary or very large one. */
function textOf(file: string): string | null {
  const path = join(ROOT, file);
  if (statSync(path).size > 8 * 1024 * 1024) return null;
  const bytes = readFileSync(path);
  return bytes.includes(0) ? null : bytes.toString('utf8');
}

describe('documents outside the repository', () => {
  // The three documents Tally was first specified by, which the repository does not hold. Built from
  // pieces so that this file does not cite them itself.
  const OUTSIDE = new RegExp(
    `(?<![\\w-])(${['dashboard', 'revenue-metrics', 'event-ingestion-service'].join('|')})\\.md(?!\\w)`,
  );
  // Migrations applied to a warehouse are immutable: migrate() compares each file's sha256 with the one
  // recorded in schema_migrations, so their opening comments keep the names they were written with.
  const IMMUTABLE = new Set(['schemas/clickhouse/005_mrr.sql', 'schemas/clickhouse/007_visits.sql']);

  it('are cited by no file: docs/api.md, docs/traffic.md and docs/revenue.md are', () => {
    const citing: string[] = [];
    for (const file of repositoryFiles()) {
      if (IMMUTABLE.has(file)) continue;
      const text = textOf(file);
      if (text === null) continue;
      text.split('\n').forEach((line, i) => {
        if (OUTSIDE.test(line)) citing.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(citing).toEqual([]);
  });

  it('leave only the immutable migrations citing them', () => {
    for (const file of IMMUTABLE) expect(readFileSync(join(ROOT, file), 'utf8')).toMatch(OUTSIDE);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (repeats numbered as GitHub does), and `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1] as string);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  }
  return anchors;
}

it('computes anchors as GitHub does', () => {
  expect(headingSlug('Node.js versions')).toBe('nodejs-versions');
  expect(headingSlug('`revenue`: money changed hands (secret token only)')).toBe(
    'revenue-money-changed-hands-secret-token-only',
  );
  expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n<a id="time"></a>')]).toEqual([
    'a',
    'a-1',
    'time',
  ]);
});

describe('relative links of the Markdown files', () => {
  const markdown = repositoryFiles().filter(
    (file) => file.endsWith('.md') && !file.startsWith('test-output/'),
  );
  const DOCS_LINK = /\]\(docs\/[^)]*\.md(#[^)]*)?\)/;

  it('include docs/*.md links from README.md and ARCHITECTURE.md', () => {
    for (const file of ['README.md', 'ARCHITECTURE.md']) {
      expect(readFileSync(join(ROOT, file), 'utf8'), file).toMatch(DOCS_LINK);
    }
  });

  it('reach an existing file, and a heading of it when they name one', () => {
    const broken: string[] = [];
    const anchorCache = new Map<string, Set<string>>();
    const anchors = (file: string) => {
      let found = anchorCache.get(file);
      if (!found) {
        found = anchorsOf(readFileSync(file, 'utf8'));
        anchorCache.set(file, found);
      }
      return found;
    };
    for (const file of markdown) {
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1] as string;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [path = '', anchor] = target.split('#');
        const resolved = path ? join(ROOT, dirname(file), decodeURIComponent(path)) : join(ROOT, file);
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} (no ${relative(ROOT, resolved)})`);
        } else if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
