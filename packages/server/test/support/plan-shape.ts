/** One node of `EXPLAIN (FORMAT JSON)`: the fields the statement-plans test reads. */
export interface PlanNode {
  'Node Type': string;
  'Join Type'?: string;
  Strategy?: string;
  'Partial Mode'?: string;
  'Parallel Aware'?: boolean;
  Operation?: string;
  Command?: string;
  'Scan Direction'?: string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  'CTE Name'?: string;
  'Function Name'?: string;
  'Subplan Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The root node of an `EXPLAIN (FORMAT JSON)` answer (the driver gives it parsed or as text). */
export const planOf = (raw: unknown): PlanNode =>
  ((typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }])[0].Plan;

export function* nodesOf(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodesOf(child);
}

const AGGREGATES: Record<string, string> = {
  Sorted: 'GroupAggregate',
  Hashed: 'HashAggregate',
  Mixed: 'MixedAggregate',
};

/** A node as EXPLAIN's text format names it, without its numbers ("Hash Left Join", "HashAggregate", "Insert"). */
function kindOf(node: PlanNode): string {
  const type = node['Node Type'];
  const join = node['Join Type'];
  let kind = type;
  if (join && join !== 'Inner')
    kind = type === 'Nested Loop' ? `Nested Loop ${join} Join` : type.replace(/ Join$/, ` ${join} Join`);
  if (type === 'Aggregate') kind = AGGREGATES[node.Strategy ?? ''] ?? type;
  if (type === 'SetOp') kind = `${node.Strategy === 'Hashed' ? 'HashSetOp' : 'SetOp'} ${node.Command ?? ''}`.trim();
  if (type === 'ModifyTable') kind = node.Operation ?? type;
  if (node['Partial Mode'] && node['Partial Mode'] !== 'Simple') kind = `${node['Partial Mode']} ${kind}`;
  if (node['Parallel Aware']) kind = `Parallel ${kind}`;
  if (node['Scan Direction'] === 'Backward') kind += ' Backward';
  return kind;
}

/** What a node reads: its index and relation, CTE, function or subquery, with the alias when it differs. */
function targetOf(node: PlanNode): string {
  const relation = node['Relation Name'];
  const index = node['Index Name'];
  const named = relation ?? node['CTE Name'] ?? node['Function Name'] ?? node.Alias;
  const alias = node.Alias && node.Alias !== named ? ` ${node.Alias}` : '';
  if (named) return `${index ? ` using ${index}` : ''} on ${named}${alias}`;
  return index ? ` on ${index}` : '';
}

/**
 * A plan reduced to what does not change from one run to the next on the same data and statistics: each node's
 * kind, what it reads (index, relation, CTE), its scan direction and strategy, its InitPlan, SubPlan or CTE name;
 * one line per node, indented by depth. No costs, row counts, timings, buffers or workers, and no conditions
 * (a custom plan writes the statement's values into them).
 */
export function shapeOf(node: PlanNode, depth = 0): string[] {
  const subplan = node['Subplan Name'] ? `[${node['Subplan Name']}] ` : '';
  return [
    `${'  '.repeat(depth)}${subplan}${kindOf(node)}${targetOf(node)}`,
    ...(node.Plans ?? []).flatMap((child) => shapeOf(child, depth + 1)),
  ];
}
