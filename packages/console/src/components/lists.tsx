import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ProblemAlert } from './problem';

/** One page of a Connection, as every list operation returns it. */
export interface ConnectionPage<Node> {
  totalCount: number;
  edges: { cursor: string; node: Node }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * A paged list with its three other states: loading, error (the problem, and a way to try again) and empty.
 * Pages are fetched with `after` = the previous page's endCursor; "Show more" appends the next one.
 */
export function PagedList<Node>({
  query,
  noun,
  empty,
  children,
}: {
  query: UseInfiniteQueryResult<InfiniteData<ConnectionPage<Node>>>;
  /** Plural, for "Loading works…" and "3 of 45 works". */
  noun: string;
  empty: ReactNode;
  children: (nodes: Node[]) => ReactNode;
}) {
  if (query.isPending) return <Loading what={noun} />;
  if (query.data === undefined) {
    return (
      <ProblemAlert error={query.error}>
        <button type="button" className="button" onClick={() => void query.refetch()}>
          Try again
        </button>
      </ProblemAlert>
    );
  }
  const pages = query.data.pages;
  const nodes = pages.flatMap((page) => page.edges.map((edge) => edge.node));
  const total = pages[pages.length - 1]?.totalCount ?? nodes.length;
  if (nodes.length === 0) return <div className="empty">{empty}</div>;
  return (
    <>
      {children(nodes)}
      <div className="pager">
        <p className="muted" aria-live="polite">
          Showing {nodes.length} of {total} {noun}
        </p>
        {query.hasNextPage && (
          <button
            type="button"
            className="button"
            onClick={() => void query.fetchNextPage()}
            disabled={query.isFetchingNextPage}
            aria-busy={query.isFetchingNextPage || undefined}
          >
            {query.isFetchingNextPage ? `Loading more ${noun}…` : `Show more ${noun}`}
          </button>
        )}
      </div>
      {/* A later page, or a refresh, failed: what was loaded stays, with the problem under it. */}
      {query.isError && <ProblemAlert error={query.error} />}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}
