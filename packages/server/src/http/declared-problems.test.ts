import type { Request } from 'express';
import { problemCodes } from '../domain/errors';
import { declaredProblemCheck, declaredProblems, problemTypes } from './declared-problems';
import { operationIdentifier } from './operation';
import { loadSpec } from './spec';

const spec = loadSpec();

// Codes the server answers outside any operation of the contract and outside /v1: 503 from the readiness probe.
// (405, for a method a path does not take, has its problem type: the spec's x-responses-outside-operations.)
const OUTSIDE_OPERATIONS = ['not_ready'];

describe('the problem types of openapi/api.yaml and the error table (domain/errors.ts)', () => {
  const types = [...problemTypes(spec).values()];

  it('has one problem type, with the same status, for every code an operation can answer', () => {
    const fromSpec = Object.fromEntries(types.map((type) => [type.code, type.status]));
    const fromTable = Object.fromEntries(
      Object.entries(problemCodes)
        .filter(([code]) => !OUTSIDE_OPERATIONS.includes(code))
        .map(([code, { status }]) => [code, status]),
    );
    expect(fromSpec).toEqual(fromTable);
  });

  it('requires what the server always sends with a code', () => {
    const required = Object.fromEntries(types.map((type) => [type.code, type.required]));
    expect(required.invalid_transition).toEqual(expect.arrayContaining(['currentStatus', 'allowedActions']));
    expect(required.validation_failed).toContain('errors');
    expect(required.internal_error).toContain('requestId');
  });

  it('declares problems for every error response of every operation', () => {
    const declared = declaredProblems(spec);
    for (const operation of spec.operations) {
      const statuses = [...declared.get(operation.operationId)!.keys()];
      expect(statuses).toEqual(expect.arrayContaining([401, 500]));
    }
    expect(
      declared
        .get('confirmRequest')!
        .get(409)!
        .map((type) => type.code),
    ).toEqual(['invalid_transition', 'work_discarded']);
    expect(
      declared
        .get('getMe')!
        .get(400)!
        .map((type) => type.code),
    ).toEqual(['validation_failed', 'malformed_request']);
    // A single-resource read: path ids that break the contract, no member, throttling, oversized headers, outages.
    const getMember = declared.get('getMember')!;
    expect(
      Object.fromEntries([...getMember].map(([status, types]) => [status, types.map((type) => type.code)])),
    ).toEqual({
      400: ['validation_failed', 'malformed_request'],
      401: ['unauthenticated'],
      // A restricted key without members:read (issue 40).
      403: ['insufficient_scope'],
      404: ['not_found'],
      429: ['rate_limited'],
      431: ['headers_too_large'],
      500: ['internal_error'],
      503: ['service_unavailable'],
    });
  });
});

describe('declaredProblemCheck', () => {
  const check = declaredProblemCheck(spec);
  const identifyOperation = operationIdentifier(spec);
  const request = (method: string, url: string) => {
    const req = { method, originalUrl: url } as Request;
    identifyOperation(req);
    return req;
  };
  const path = '/v1/tenants/t1/works/w1/requests/r1/validate';
  const problem = (status: number, code: string, extensions = {}) => ({
    type: `https://works-api.dev/problems/${code}`,
    title: 'Conflict',
    status,
    detail: 'What went wrong.',
    instance: path,
    code,
    ...extensions,
  });

  it('accepts a declared code with its required properties', () => {
    const body = problem(409, 'invalid_transition', { currentStatus: 'pending', allowedActions: [] });
    expect(check(request('PUT', path), body)).toBeUndefined();
  });

  it('names a code the response does not declare', () => {
    expect(check(request('PUT', path), problem(409, 'last_owner'))).toBe(
      'validateRequest answered 409 last_owner, but its 409 response declares only invalid_transition, work_discarded',
    );
  });

  it('names a status the operation does not declare', () => {
    expect(check(request('GET', '/v1/me?x=1'), problem(413, 'payload_too_large'))).toBe(
      'getMe answered 413 payload_too_large, but openapi/api.yaml declares no 413 problem for it',
    );
  });

  it('names a required property that is missing', () => {
    expect(check(request('PUT', path), problem(409, 'invalid_transition'))).toBe(
      'validateRequest answered 409 invalid_transition without currentStatus, allowedActions, which InvalidTransitionProblem requires',
    );
  });

  it('leaves requests that match no operation alone', () => {
    expect(check(request('GET', '/v1/nowhere'), problem(404, 'not_found'))).toBeUndefined();
    expect(check(request('GET', '/readyz'), problem(503, 'not_ready'))).toBeUndefined();
  });
});
