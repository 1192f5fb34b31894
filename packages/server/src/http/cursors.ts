import { Cursors, type ListBinding } from '../domain/cursors';
import { type Connection, listOfConnection, type PagedList } from '../domain/paging';
import type { Spec } from './spec';

/** The query parameters that move along a list rather than choose it. */
const PAGING = new Set(['limit', 'after']);

type Node = Record<string, unknown>;

/**
 * Cursors at the edge of the service (domain/cursors.ts): `after` read into the id the domain pages by, and the
 * ids of every Connection of a response turned into cursors of the list each pages on: the operation's own list,
 * or the list a nested Connection is the first page of (`pagesOn`).
 */
export class CursorEdge {
  private readonly filtersOf: Map<string, Array<{ name: string; default?: string }>>;

  constructor(
    spec: Spec,
    private readonly cursors: Cursors,
  ) {
    this.filtersOf = new Map(
      spec.operations
        .filter((operation) => operation.takes.after)
        .map((operation) => [operation.operationId, operation.query.filter(({ name }) => !PAGING.has(name))]),
    );
  }

  /** The list a request (or a `pagesOn` mark) names: its operation, parent ids and filters, defaults filled in. */
  binding({ operationId, path, query = {} }: PagedList): ListBinding {
    const filters = this.filtersOf.get(operationId);
    if (!filters) throw new Error(`${operationId} is not a list operation of the contract`);
    const chosen: Record<string, string> = {};
    for (const { name, default: fallback } of filters) {
      const value = query[name] ?? fallback;
      if (value !== undefined) chosen[name] = value;
    }
    return { operationId, path, filters: chosen };
  }

  /** The cursor of the item `id` in `list` (what a page of that list would hand out for it). */
  cursorOf(list: PagedList, id: string): string {
    return this.cursors.issue(this.binding(list), id);
  }

  /** The id `after` stands for in `list`, or `400 invalid_cursor`. */
  read(list: PagedList, after: string): string {
    return this.cursors.read(this.binding(list), after);
  }

  /**
   * Replaces the ids of every Connection in `body` by cursors: the top-level one of a list operation with the
   * request's list (`own`), nested ones with the list they are marked to page on. A Connection with neither is a bug.
   */
  issue(body: unknown, own: PagedList | undefined): void {
    const visit = (node: unknown, list: PagedList | undefined): void => {
      if (Array.isArray(node)) return node.forEach((item) => visit(item, undefined));
      if (typeof node !== 'object' || node === null) return;
      if (isConnection(node)) {
        const pagesOn = listOfConnection(node) ?? list;
        if (!pagesOn) throw new Error('a Connection in a response that pages on no list operation');
        const binding = this.binding(pagesOn);
        for (const edge of node.edges) {
          edge.cursor = this.cursors.issue(binding, edge.cursor);
          visit(edge.node, undefined);
        }
        if (node.pageInfo.endCursor !== null)
          node.pageInfo.endCursor = this.cursors.issue(binding, node.pageInfo.endCursor);
        return;
      }
      for (const value of Object.values(node as Node)) visit(value, list);
    };
    visit(body, own);
  }
}

function isConnection(node: object): node is Connection<unknown> {
  const candidate = node as Partial<Connection<unknown>>;
  return Array.isArray(candidate.edges) && typeof candidate.pageInfo === 'object' && candidate.pageInfo !== null;
}
