// The cluster form of the migrations (CLICKHOUSE_CLUSTER), generated from the single-node files of
// schemas/clickhouse, never written twice by hand. Each statement is read with the engine's own parser
// (`formatQuery` gives its canonical text, `EXPLAIN AST` its tree) and rewritten:
//   CREATE TABLE t … ENGINE = XMergeTree(args)  →  CREATE TABLE t_local ON CLUSTER c … ENGINE =
//        ReplicatedXMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', args)
//     and CREATE TABLE t ON CLUSTER c AS t_local ENGINE = Distributed(c, db, t_local, <t's sharding key>)
//   CREATE VIEW v …                               →  CREATE VIEW v ON CLUSTER c … (over the Distributed names)
//   ALTER TABLE t <column commands>               →  on t_local and on t, each ON CLUSTER c
//   ALTER TABLE t <indexes, TTL, settings>        →  on t_local ON CLUSTER c
//   INSERT INTO t … SELECT …                      →  unchanged: run once, through the Distributed tables
// Anything else fails, naming the file and the statement. Every output is parsed again: its canonical text
// must be itself, and its tree the source's but for the table name and the engine. The cluster and the
// database are written as placeholders, replaced when the migrations run (bindClusterNames).

import { type AstNode, parseAstDump } from './ast-dump.ts';
import { WarehouseError } from './errors.ts';
import { checkClusterName, checkDatabaseName, type Warehouse } from './warehouse.ts';

export const CLUSTER_PLACEHOLDER = '__TALLY_CLUSTER__';
export const DATABASE_PLACEHOLDER = '__TALLY_DATABASE__';
/** Where each replica keeps a table's state in Keeper: the server's own macros, expanded on each node. */
export const KEEPER_PATH = '/clickhouse/tables/{shard}/{database}/{table}';
export const LOCAL_SUFFIX = '_local';

export interface ShardingKey {
  /** The expression the Distributed table spreads rows over the shards by. */
  key: string;
  /**
   * Why rows that must meet on one shard share the key although it reads columns outside the table's
   * ORDER BY (ReplacingMergeTree deduplicates, and FINAL folds, within one shard only). Without it the
   * key must read ORDER BY columns only, so that rows with one sorting key always share a shard.
   */
  beyondSortingKey?: string;
}

/** The sharding key of every table the migrations create; docs/design/cluster.md gives each one's reason. */
export const SHARDING_KEYS: Readonly<Record<string, ShardingKey>> = {
  schema_migrations: { key: 'cityHash64(version)' },
  events: {
    key: 'cityHash64(project_id, visitor_id)',
    beyondSortingKey:
      "the key is the record id, and a record's copies are the same record, with one visitor_id; the analytics consumer folds a visitor's records into visits together",
  },
  identities: { key: 'cityHash64(project_id, visitor_id)' },
  revenue: { key: 'cityHash64(project_id, transaction_id)' },
  mrr_movements: { key: 'cityHash64(project_id, customer_id)' },
  record_ids: { key: 'cityHash64(project_id, id)' },
  visits: { key: 'cityHash64(project_id, visitor_id)' },
  exchange_rates: { key: 'cityHash64(base, currency, period)' },
  relanded_parts: { key: 'cityHash64(table_name, part)' },
  visit_durations: { key: 'cityHash64(project_id)' },
};

/** ALTER commands that change columns: the Distributed table must change with its local table. */
const COLUMN_COMMANDS = new Set([
  'ADD_COLUMN',
  'DROP_COLUMN',
  'MODIFY_COLUMN',
  'RENAME_COLUMN',
  'COMMENT_COLUMN',
]);
/** ALTER commands about storage only (indexes, projections, TTL, settings): the local tables alone. */
const STORAGE_COMMANDS = new Set([
  'ADD_INDEX',
  'DROP_INDEX',
  'MATERIALIZE_INDEX',
  'ADD_PROJECTION',
  'DROP_PROJECTION',
  'MATERIALIZE_PROJECTION',
  'MODIFY_TTL',
  'MODIFY_SETTING',
  'RESET_SETTING',
]);

/** A statement the generator cannot put in cluster form: fix the migration or teach the generator. */
export class ClusterDdlError extends WarehouseError {
  constructor(source: string, statement: string, reason: string) {
    const first = statement.trim().split('\n')[0] ?? '';
    super(`${source}: cannot generate the cluster form of "${first.slice(0, 120)}": ${reason}`, {
      retryable: false,
    });
    this.name = 'ClusterDdlError';
  }
}

/** The engine's parser: the canonical text of a statement and its tree. */
export interface SqlParser {
  canonical(sql: string): Promise<string>;
  tree(sql: string): Promise<AstNode>;
}

/** The parser of the engine behind a warehouse (chDB in the generator and the tests). */
export function engineSqlParser(warehouse: Warehouse): SqlParser {
  return {
    async canonical(sql) {
      const [row] = await warehouse.query<{ text: string }>('SELECT formatQuery({sql:String}) AS text', {
        sql,
      });
      return (row as { text: string }).text;
    },
    async tree(sql) {
      const rows = await warehouse.query<{ explain: string }>(`EXPLAIN AST ${sql}`);
      const root = parseAstDump(rows.map((row) => row.explain).join('\n'));
      if (!root) throw new WarehouseError(`EXPLAIN AST gave no single tree for: ${sql.slice(0, 120)}`);
      return root;
    },
  };
}

/** A node and everything under it, as EXPLAIN AST prints it (indentation aside). */
function dump(node: AstNode, depth = 0): string {
  return [`${' '.repeat(depth)}${node.line}`, ...node.children.map((c) => dump(c, depth + 1))].join('\n');
}

function identifiers(node: AstNode): string[] {
  const own = node.type === 'Identifier' ? [node.name] : [];
  return [...own, ...node.children.flatMap(identifiers)];
}

/** The expression of `SELECT <expression>`, from its tree. */
function selected(select: AstNode): AstNode {
  const expression = select.children[0]?.children[0]?.children[0]?.children[0];
  if (select.type !== 'SelectWithUnionQuery' || !expression)
    throw new WarehouseError('not the tree of a SELECT');
  return expression;
}

const child = (node: AstNode, prefix: string) => node.children.find((c) => c.line.startsWith(prefix));

/** Generates the cluster form of migrations in order, knowing the tables created by the ones before. */
export class ClusterDdlGenerator {
  readonly #parser: SqlParser;
  /** Tables created so far (their Distributed names). */
  readonly #tables = new Set<string>();

  constructor(parser: SqlParser) {
    this.#parser = parser;
  }

  /** The cluster statements of one file's statements, in order. `source` names the file in errors. */
  async migration(source: string, statements: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const statement of statements) out.push(...(await this.statement(source, statement)));
    return out;
  }

  async statement(source: string, statement: string): Promise<string[]> {
    const fail = (reason: string) => new ClusterDdlError(source, statement, reason);
    if (statement.includes(CLUSTER_PLACEHOLDER) || statement.includes(DATABASE_PLACEHOLDER)) {
      throw fail(`it holds ${CLUSTER_PLACEHOLDER} or ${DATABASE_PLACEHOLDER}, the generator's placeholders`);
    }
    const canonical = await this.#parser.canonical(statement).catch((error: unknown) => {
      throw fail(`the engine does not parse it (${(error as Error).message})`);
    });
    const tree = await this.#parser.tree(canonical);
    const first = canonical.split('\n')[0] as string;
    if (/\bON CLUSTER\b/.test(first)) throw fail('a migration is written for one node, without ON CLUSTER');
    if (tree.type === 'CreateQuery' && /^CREATE TABLE /.test(first))
      return this.#table(canonical, tree, fail);
    if (tree.type === 'CreateQuery' && /^CREATE (OR REPLACE )?VIEW /.test(first)) {
      return this.#view(canonical, tree, fail);
    }
    if (tree.type === 'AlterQuery') return this.#alter(canonical, tree, fail);
    if (tree.type === 'InsertQuery') return this.#insert(canonical, tree, fail);
    throw fail(`${first.split(' ').slice(0, 3).join(' ')} (${tree.type}) has no cluster form here`);
  }

  async #table(canonical: string, tree: AstNode, fail: (reason: string) => Error): Promise<string[]> {
    const name = tree.name;
    const lines = canonical.split('\n');
    const first = lines[0] as string;
    if (first !== `CREATE TABLE IF NOT EXISTS ${name}` && first !== `CREATE TABLE ${name}`) {
      throw fail('expected CREATE TABLE [IF NOT EXISTS] <name> of the current database, with its columns');
    }
    const columns = child(tree, 'Columns definition');
    const storage = child(tree, 'Storage definition');
    if (!columns || !storage || tree.children.length !== 3) {
      throw fail('expected a table with its own columns and engine (not AS another table or a SELECT)');
    }
    const engineNode = storage.children[0];
    const engineLines = lines
      .map((line, at) => [line, at] as const)
      .filter(([line]) => /^ENGINE = /.test(line));
    const engineMatch = /^ENGINE = ([A-Za-z]+)(?:\((.*)\))?$/.exec(engineLines[0]?.[0] ?? '');
    if (engineLines.length !== 1 || !engineMatch || !engineNode)
      throw fail('expected one ENGINE line in its canonical text');
    const [, engine, args] = engineMatch as unknown as [string, string, string | undefined];
    if (engineNode.type !== 'Function' || engineNode.name !== engine)
      throw fail('its engine is not what it seems');
    if (!engine.endsWith('MergeTree') || engine.startsWith('Replicated')) {
      throw fail(`engine ${engine}: only the (non-replicated) MergeTree family has a replicated form`);
    }
    const orderLines = lines.filter((line) => /^ORDER BY /.test(line));
    if (orderLines.length !== 1) throw fail('expected one ORDER BY line in its canonical text');
    const sharding = SHARDING_KEYS[name];
    if (!sharding) throw fail(`table ${name} has no sharding key: add it to SHARDING_KEYS, with its reason`);
    const sortingColumns = identifiers(
      await this.#parser.tree(`SELECT ${orderLines[0]?.slice('ORDER BY '.length)}`),
    );
    const keyTree = await this.#parser.tree(`SELECT ${sharding.key}`);
    const outside = identifiers(keyTree).filter((column) => !sortingColumns.includes(column));
    if (outside.length > 0 && !sharding.beyondSortingKey) {
      throw fail(
        `its sharding key reads ${outside.join(', ')}, outside ORDER BY: rows ReplacingMergeTree must meet could land on two shards`,
      );
    }

    const local = `${name}${LOCAL_SUFFIX}`;
    const [, engineAt] = engineLines[0] as readonly [string, number];
    const replicated = lines.map((line, at) => {
      if (at === 0) return `CREATE TABLE IF NOT EXISTS ${local} ON CLUSTER ${CLUSTER_PLACEHOLDER}`;
      if (at === engineAt)
        return `ENGINE = Replicated${engine}('${KEEPER_PATH}', '{replica}'${args ? `, ${args}` : ''})`;
      return line;
    });
    const localSql = await this.#checked(replicated.join('\n'), fail);
    const localTree = await this.#parser.tree(localSql);
    const localStorage = child(localTree, 'Storage definition');
    const localEngine = localStorage?.children[0];
    const keptArgs = engineNode.children[0]?.children ?? [];
    const newArgs = localEngine?.children[0]?.children ?? [];
    if (
      localTree.name !== local ||
      dump(child(localTree, 'Columns definition') as AstNode) !== dump(columns) ||
      localEngine?.name !== `Replicated${engine}` ||
      newArgs.length !== keptArgs.length + 2 ||
      newArgs[0]?.line !== `Literal '${KEEPER_PATH}'` ||
      newArgs[1]?.line !== "Literal '{replica}'" ||
      newArgs
        .slice(2)
        .map((n) => dump(n))
        .join('\n') !== keptArgs.map((n) => dump(n)).join('\n') ||
      localStorage?.children
        .slice(1)
        .map((n) => dump(n))
        .join('\n') !==
        storage.children
          .slice(1)
          .map((n) => dump(n))
          .join('\n') ||
      !localSql.startsWith(`CREATE TABLE IF NOT EXISTS ${local} ON CLUSTER ${CLUSTER_PLACEHOLDER}\n`)
    ) {
      throw fail('its replicated form does not parse back as the same table with a replicated engine');
    }

    const distributedSql = await this.#checked(
      `CREATE TABLE IF NOT EXISTS ${name} ON CLUSTER ${CLUSTER_PLACEHOLDER} AS ${local} ` +
        `ENGINE = Distributed(${CLUSTER_PLACEHOLDER}, ${DATABASE_PLACEHOLDER}, ${local}, ${sharding.key})`,
      fail,
    );
    const distributed = child(await this.#parser.tree(distributedSql), 'Storage definition')?.children[0];
    const distributedArgs = distributed?.children[0]?.children ?? [];
    if (
      distributed?.name !== 'Distributed' ||
      distributedArgs
        .map((n) => n.line)
        .slice(0, 3)
        .join() !== [CLUSTER_PLACEHOLDER, DATABASE_PLACEHOLDER, local].map((n) => `Identifier ${n}`).join() ||
      dump(distributedArgs[3] as AstNode) !== dump(selected(keyTree))
    ) {
      throw fail('its Distributed table does not parse back as expected');
    }
    this.#tables.add(name);
    return [localSql, distributedSql];
  }

  async #view(canonical: string, tree: AstNode, fail: (reason: string) => Error): Promise<string[]> {
    const lines = canonical.split('\n');
    const match = /^CREATE (OR REPLACE )?VIEW (IF NOT EXISTS )?([A-Za-z_][A-Za-z0-9_]*)$/.exec(
      lines[0] as string,
    );
    if (
      !match ||
      match[3] !== tree.name ||
      child(tree, 'Storage definition') ||
      !child(tree, 'SelectWithUnionQuery')
    ) {
      throw fail(
        'expected CREATE [OR REPLACE] VIEW [IF NOT EXISTS] <name> AS SELECT (materialized views are not used)',
      );
    }
    lines[0] = `${lines[0]} ON CLUSTER ${CLUSTER_PLACEHOLDER}`;
    const sql = await this.#checked(lines.join('\n'), fail);
    if (dump(await this.#parser.tree(sql)) !== dump(tree) || !sql.startsWith(`${lines[0]}\n`)) {
      throw fail('its ON CLUSTER form does not parse back as the same view');
    }
    return [sql];
  }

  async #alter(canonical: string, tree: AstNode, fail: (reason: string) => Error): Promise<string[]> {
    const lines = canonical.split('\n');
    // "AlterQuery  events": the table's name is its last child's, an Identifier.
    const table = tree.children.at(-1);
    const name = table?.type === 'Identifier' ? table.name : '';
    if (!name || lines[0] !== `ALTER TABLE ${name}`)
      throw fail('expected ALTER TABLE <name> of the current database');
    if (!this.#tables.has(name)) throw fail(`table ${name} is not one the migrations before it created`);
    const commands = (tree.children[0]?.children ?? []).map((c) =>
      c.type === 'AlterCommand' ? c.name : c.type,
    );
    const onColumns = commands.every((c) => COLUMN_COMMANDS.has(c));
    if (!onColumns && !commands.every((c) => STORAGE_COMMANDS.has(c))) {
      throw fail(
        `ALTER ${commands.join(', ')}: only column commands, or only index, projection, TTL or setting commands, have a cluster form here (split it, or teach the generator)`,
      );
    }
    const on = async (target: string) => {
      const sql = await this.#checked(
        [`ALTER TABLE ${target} ON CLUSTER ${CLUSTER_PLACEHOLDER}`, ...lines.slice(1)].join('\n'),
        fail,
      );
      const renamed = dump(tree).replace(
        new RegExp(`^(\\s*(?:AlterQuery|Identifier) +)${name}\\b`, 'gm'),
        `$1${target}`,
      );
      if (
        dump(await this.#parser.tree(sql)) !== renamed ||
        !sql.startsWith(`ALTER TABLE ${target} ON CLUSTER `)
      ) {
        throw fail(`its form on ${target} does not parse back as the same ALTER`);
      }
      return sql;
    };
    const local = await on(`${name}${LOCAL_SUFFIX}`);
    return onColumns ? [local, await on(name)] : [local];
  }

  async #insert(canonical: string, tree: AstNode, fail: (reason: string) => Error): Promise<string[]> {
    const target = tree.children[0];
    if (target?.type !== 'Identifier' || !this.#tables.has(target.name)) {
      throw fail('expected INSERT INTO a table the migrations before it created (its Distributed name)');
    }
    if (!child(tree, 'SelectWithUnionQuery'))
      throw fail('expected INSERT … SELECT (a migration inserts no data of its own)');
    return [await this.#checked(canonical, fail)];
  }

  /** The engine's canonical text of `sql`, which must be its own canonical text. */
  async #checked(sql: string, fail: (reason: string) => Error): Promise<string> {
    const canonical = await this.#parser.canonical(sql).catch((error: unknown) => {
      throw fail(`the engine does not parse its cluster form (${(error as Error).message}): ${sql}`);
    });
    if ((await this.#parser.canonical(canonical)) !== canonical)
      throw fail('its cluster form is not canonical');
    return canonical;
  }
}

/** The text of a generated cluster file (schemas/clickhouse/cluster/<name>.sql). */
export function clusterFileText(sourceFile: string, checksum: string, statements: readonly string[]): string {
  return [
    `-- Generated from schemas/clickhouse/${sourceFile} by \`npm run schema:cluster\`: do not edit.`,
    `-- source sha256: ${checksum}`,
    `-- What the migrations run when CLICKHOUSE_CLUSTER is set, ${CLUSTER_PLACEHOLDER} and ${DATABASE_PLACEHOLDER}`,
    '-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").',
    '',
    ...statements.map((s) => `${s};\n`),
  ].join('\n');
}

/** The source checksum a generated cluster file was made from, or null when it names none. */
export function clusterFileChecksum(text: string): string | null {
  return /^-- source sha256: ([0-9a-f]{64})$/m.exec(text)?.[1] ?? null;
}

/** A generated statement with the placeholders replaced by the cluster's and the database's names. */
export function bindClusterNames(sql: string, cluster: string, database: string): string {
  return sql
    .replaceAll(CLUSTER_PLACEHOLDER, checkClusterName(cluster))
    .replaceAll(DATABASE_PLACEHOLDER, checkDatabaseName(database));
}
