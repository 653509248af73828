// The engine's own parse of a statement: `EXPLAIN AST`'s indented dump read into a tree. The cluster DDL
// generator (cluster-ddl.ts) rewrites migrations from it, and the HTTP interface's statement policy
// (@tally/warehouse-http) decides from it what a user may run.

/** One line of `EXPLAIN AST`: the node's type, the word after it (a function's or table's name), children. */
export interface AstNode {
  type: string;
  name: string;
  line: string;
  children: AstNode[];
}

/**
 * Reads `EXPLAIN AST`'s indented dump (one space per level) into a tree; null when it is not one whole tree:
 * two roots, or a node whose `(children N)` does not match the lines under it (a dump cut short by a
 * setting that limits results cannot pass for a shorter statement).
 */
export function parseAstDump(dump: string): AstNode | null {
  const lines = dump.split('\n').filter((line) => line.trim() !== '');
  const stack: { depth: number; node: AstNode }[] = [];
  const declared = new Map<AstNode, number>();
  let root: AstNode | null = null;
  for (const line of lines) {
    const depth = line.length - line.trimStart().length;
    const text = line.trim();
    // "Function file (alias b) (children 1)", "SelectWithUnionQuery (children 2)", "SYSTEM query".
    const words = text.split(' ');
    const node: AstNode = {
      type: words[0] ?? '',
      name: words[1] && !words[1].startsWith('(') ? words[1] : '',
      line: text,
      children: [],
    };
    declared.set(node, Number(/\(children (\d+)\)$/.exec(text)?.[1] ?? 0));
    while (stack.length && (stack.at(-1) as { depth: number }).depth >= depth) stack.pop();
    const parent = stack.at(-1);
    if (parent) parent.node.children.push(node);
    else if (root) return null;
    else root = node;
    stack.push({ depth, node });
  }
  for (const [node, count] of declared) if (node.children.length !== count) return null;
  return root;
}
