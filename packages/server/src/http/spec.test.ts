import Ajv2020 from 'ajv/dist/2020';
import { closedDocument, loadSpec } from './spec';

describe('closedDocument: the contract as our own tests read it', () => {
  const { document } = loadSpec();
  const validatorFor = (doc: object, name: string) => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema(doc, 'api');
    return ajv.compile({ $ref: `api#/components/schemas/${name}` });
  };
  const user = {
    id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    createdAt: '2026-11-22T10:15:00.000Z',
  };

  it('is open where partners read it, closed where our tests do', () => {
    expect(validatorFor(document, 'User')({ ...user, colour: 'teal' })).toBe(true);
    expect(validatorFor(closedDocument(document), 'User')({ ...user, colour: 'teal' })).toBe(false);
    expect(validatorFor(closedDocument(document), 'User')(user)).toBe(true);
  });

  it('leaves a problem type as a whole: its allOf member that fixes `code` narrows, it does not close', () => {
    const notFound = {
      type: 'https://works-api.dev/problems/not_found',
      title: 'Not found',
      status: 404,
      detail: 'No tenant with this id.',
      instance: '/v1/tenants/x',
      code: 'not_found',
    };
    const closed = validatorFor(closedDocument(document), 'NotFoundProblem');
    expect(closed(notFound)).toBe(true);
    expect(closed({ ...notFound, hint: 'extra' })).toBe(false);
  });

  it('does not change the document it is given', () => {
    const before = JSON.stringify(document);
    closedDocument(document);
    expect(JSON.stringify(document)).toBe(before);
  });
});
