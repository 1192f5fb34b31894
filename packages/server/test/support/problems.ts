import type { Problem } from './roles';

/**
 * Checks that `res` is a problem+json answer with `status` and `code`, and the fields every problem carries (its
 * type URI, title, detail, instance); with `path`, that a field at that path (or matching it) is among `errors`.
 * Returns the problem for further checks.
 */
export async function expectProblem(
  res: Pick<Response, 'status' | 'headers' | 'json'>,
  status: number,
  code: string,
  path?: string | RegExp,
): Promise<Problem> {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Problem;
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  expect(body).toMatchObject({ status, type: `https://works-api.dev/problems/${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(typeof body.instance).toBe('string');
  if (path !== undefined) {
    const wanted = typeof path === 'string' ? path : expect.stringMatching(path);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: wanted })]));
  }
  return body;
}
