import { loadSpec, operationMatcher } from '../../src/http/spec';

/**
 * Every status an operation answers must be documented under its `responses` in openapi/api.yaml. Problem
 * bodies are sent as text, so the response validator does not see them; this check does, for every call a test
 * makes through `TestServer.call`. Paths that match no operation (unknown routes, other methods) are not checked.
 */
export function documentedStatusCheck(): (method: string, url: string, status: number) => void {
  const spec = loadSpec();
  const paths = spec.document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
  const operationAt = operationMatcher(spec);
  return (method, url, status) => {
    const operation = operationAt(method, new URL(url, 'http://x').pathname);
    if (operation && !(String(status) in paths[operation.path]![operation.method]!.responses)) {
      throw new Error(`${operation.operationId} answered ${status}, which openapi/api.yaml does not document for it`);
    }
  };
}
