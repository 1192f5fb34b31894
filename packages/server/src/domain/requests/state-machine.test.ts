import { allowedActions, decide, type RequestAction, type RequestStatus, type Validation } from './state-machine';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { specPath } from '../../http/spec';

const actions: RequestAction[] = ['confirm', 'validate', 'early_validate', 'cancel'];

describe('request state machine', () => {
  it.each([
    ['confirm', 'pending', 'confirmed'],
    ['validate', 'confirmed', 'validated'],
    ['early_validate', 'pending', 'validated'],
    ['early_validate', 'confirmed', 'validated'],
    ['cancel', 'pending', 'cancelled'],
    ['cancel', 'confirmed', 'cancelled'],
  ] as const)('%s moves %s to %s', (action, status, to) => {
    expect(decide(action, { status, validation: null })).toMatchObject({ kind: 'apply', to });
  });

  it.each([
    ['confirm', 'confirmed', null],
    ['validate', 'validated', 'standard'],
    ['early_validate', 'validated', 'early'],
    ['cancel', 'cancelled', null],
  ] as const)('repeating %s on a %s request is a no-op', (action, status, validation) => {
    expect(decide(action, { status, validation })).toEqual({ kind: 'repeat' });
  });

  it.each([
    ['validate', 'pending', null],
    ['confirm', 'validated', 'standard'],
    ['confirm', 'cancelled', null],
    ['validate', 'validated', 'early'],
    ['early_validate', 'validated', 'standard'],
    ['validate', 'cancelled', null],
    ['early_validate', 'cancelled', null],
    ['cancel', 'validated', 'early'],
  ] as const)('%s on a %s request (%s) is a conflict', (action, status, validation) => {
    expect(decide(action, { status, validation })).toEqual({
      kind: 'conflict',
      currentStatus: status,
      allowedActions: allowedActions(status),
    });
  });

  it('lists the allowed actions of every status', () => {
    expect(allowedActions('pending')).toEqual(['confirm', 'early_validate', 'cancel']);
    expect(allowedActions('confirmed')).toEqual(['validate', 'early_validate', 'cancel']);
    expect(allowedActions('validated')).toEqual([]);
    expect(allowedActions('cancelled')).toEqual([]);
  });

  it('gives every (action, state) pair exactly one answer consistent with allowedActions', () => {
    const states: Array<[RequestStatus, Validation | null]> = [
      ['pending', null],
      ['confirmed', null],
      ['validated', 'standard'],
      ['validated', 'early'],
      ['cancelled', null],
    ];
    for (const [status, validation] of states) {
      for (const action of actions) {
        const decision = decide(action, { status, validation });
        expect(decision.kind === 'apply').toBe(allowedActions(status).includes(action));
      }
    }
  });
});

describe('the contract', () => {
  it("declares this state machine: x-allowed-actions on RequestStatus (the console's and the client's table)", () => {
    const spec = parse(readFileSync(specPath, 'utf8')) as {
      components: { schemas: { RequestStatus: { 'x-allowed-actions'?: unknown } } };
    };
    const statuses: RequestStatus[] = ['pending', 'confirmed', 'validated', 'cancelled'];
    expect(spec.components.schemas.RequestStatus['x-allowed-actions']).toEqual(
      Object.fromEntries(statuses.map((status) => [status, allowedActions(status)])),
    );
  });
});
