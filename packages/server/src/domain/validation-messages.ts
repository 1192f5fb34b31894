/**
 * Every message of a `400 validation_failed`, in one table: the rule in words, put after the name of the field it
 * is about (`name must not be blank`). The validator's findings (http/validation-errors.ts), the server's own text
 * rules (domain/text.ts) and the date rules (domain/dates.ts) all answer with these, and the contract says the same
 * words: a named schema's description states its rules, and its `x-pattern-message` (which generators put into
 * their own validators) is its `pattern` entry below, word for word (test/integration/validation-messages.test.ts).
 */
export const ruleMessages = {
  required: 'is required',
  notEmpty: 'must not be empty',
  blank: 'must not be blank',
  controlCharacters: 'must not contain control characters',
  controlCharactersButLineBreaks: 'must not contain control characters other than line breaks and tabs',
  unpairedSurrogate: 'must not contain an unpaired surrogate',
  realDateTime: 'must be a real date and time, such as 2026-11-26T10:00:00Z',
  future: 'must be in the future',
  email: 'must be an email address, such as ada@example.com',
  url: 'must be an absolute URL, such as https://hooks.example.com/works-api',
  https: 'must be an https URL',
  noCredentials: 'must not contain credentials',
  publicAddress: 'must point to a public address',
  port443: 'must use port 443',
  publicHost: 'must have a host name that resolves to public addresses only',
  uniqueItems: 'must not list the same item twice',
  someProperty: 'must set at least one property',
  noProperty: 'must be empty: this operation takes no input',
  sentOnce: 'must be sent at most once',
  searchWord: 'must contain a letter or a digit',
  ourCursor: 'must be the endCursor of a page of this same list, with the same filters',
  withinAYear: 'must be at most a year (366 days) ahead',
  yourTenants: 'must list only tenants you are a member of',
  scopesYourRoleAllows: "must list only scopes your role allows in the key's tenants",
  notOnRestrictedKey: 'must not list account:manage: a restricted key never manages API keys or invitations',
  noTenantCreationWithTenants: 'must not list tenants:create together with tenants',
} as const;

/** Messages that carry a number or a value from the contract. */
export const boundMessages = {
  atLeastCharacters: (limit: number) => `must be at least ${limit} characters`,
  atMostCharacters: (limit: number) => `must be at most ${limit} characters`,
  atLeast: (limit: number) => `must be at least ${limit}`,
  atMost: (limit: number) => `must be at most ${limit}`,
  atMostItems: (limit: number) => `must list at most ${limit} items`,
  atMostWords: (limit: number) => `must have at most ${limit} words`,
  oneOf: (values: readonly unknown[]) => `must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`,
  constant: (value: unknown) => `must be ${JSON.stringify(value)}`,
  type: (types: readonly string[]) => `must be ${types.map((type) => typeInWords[type] ?? type).join(' or ')}`,
  unknownProperty: (name: string) => `unknown property "${name}"`,
  unknownParameter: (name: string) => `unknown query parameter "${name}"`,
} as const;

const typeInWords: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/**
 * The named schemas whose rules read better than their keywords: what their `pattern` says (given the value, when
 * one pattern holds two rules), and the length a person should read (the schema's `maxLength` bounds the raw input;
 * the rule is about the trimmed text). A schema not listed here is described by its keywords alone.
 */
export const schemaRules: Record<
  string,
  { pattern?: string; patternFor?: (value: string) => string; maxLength?: string; minLength?: string; format?: string }
> = {
  Name: {
    pattern: 'must not be blank, and must not contain control characters',
    patternFor: (value) => (CONTROL.test(value) ? ruleMessages.controlCharacters : ruleMessages.blank),
    minLength: ruleMessages.blank,
    maxLength: boundMessages.atMostCharacters(200),
  },
  PersonName: {
    pattern: ruleMessages.controlCharacters,
    maxLength: boundMessages.atMostCharacters(200),
  },
  LongText: { pattern: ruleMessages.controlCharactersButLineBreaks },
  WebhookEndpointDescription: { pattern: ruleMessages.controlCharactersButLineBreaks },
  Answer: { pattern: ruleMessages.controlCharactersButLineBreaks, minLength: ruleMessages.notEmpty },
  RequestStatusList: { pattern: 'must be request statuses separated by commas, such as pending,confirmed' },
  EventTypeList: { pattern: 'must be event types separated by commas, such as request.confirmed,request.validated' },
  IdInPath: { pattern: 'must be 1 to 64 letters, digits, "-" or "_"' },
  // In a body only as a new API key's tenants.
  Id: { pattern: 'must be a lower-case UUID, such as 0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b' },
  IdempotencyKey: { pattern: 'must be 1 to 255 visible ASCII characters, without spaces' },
  DateTimeInput: { format: ruleMessages.realDateTime },
  Email: { format: ruleMessages.email },
  WebhookUrl: { format: ruleMessages.url },
};

// U+0000–U+001F and U+007F–U+009F: what Name's pattern calls a control character.
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x1F\x7F-\x9F]/;

/** A field's name as a person reads it in a message: `/body/recipient/email` → `recipient.email`. */
export function fieldName(path: string): string {
  const [, , ...rest] = path.split('/');
  return rest.length === 0 ? 'the body' : rest.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
}

/** `name must not be blank`: the field's name, then the rule. */
export const aboutField = (path: string, rule: string): string => `${fieldName(path)} ${rule}`;
