// ESLint for the whole repository (`pnpm lint`): typescript-eslint's type-aware rules on TypeScript (floating
// promises, unsafe `any`, misused promises, ...), the recommended JavaScript rules on scripts, and nothing about
// layout: Prettier owns that (eslint-config-prettier turns the overlapping rules off).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const OUTSIDE_THE_DOMAIN = [
  'http',
  'mail',
  'observability',
  'webhooks',
  'handlers',
  'jobs',
  'redis',
  'start-up',
  'main',
  'app',
  'worker',
  'cluster',
];
// Prisma's query API, called on a model of a client or a transaction (`db.prisma.work.findMany(`, `tx.apiKey.create(`):
// the database package's. (`this.<collection>.delete(` is a Map or Set of the server's own.)
const PRISMA_QUERY_METHODS = [
  'findMany',
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
  'count',
  'aggregate',
  'groupBy',
];
const STATEMENT_MESSAGE =
  'Statements live in the database package: call (or add) a typed function of prisma/src/statements/<resource>.ts.';
// The request-body fields the contract wants in the future (a written date in a test passes one day).
const FUTURE_ONLY_FIELDS = '/^(dueAt|expiresAt)$/';
const WRITTEN_DATE = '/^\\d{4}-\\d\\d-\\d\\d/';

// What a write in the domain shares with a feature folder: the mail caps every email-queuing write checks, and the
// webhook events every change records. Rules, like the domain's own; the rest of mail/ and webhooks/ calls the domain.
const FEATURE_RULES = ['mail/caps', 'webhooks/events'];

const domainRule = (up) => ({
  regex: `^${up.replaceAll('.', '\\.')}(?!(?:${FEATURE_RULES.join('|')})(?:\\.js)?$)(?:${OUTSIDE_THE_DOMAIN.join('|')})(?:$|/|\\.js$)`,
  message:
    'The domain holds the rules only: HTTP, mail, observability, the jobs and start-up call it, never the reverse.',
});

function layerRules() {
  const rule = (...patterns) => ({ '@typescript-eslint/no-restricted-imports': ['error', { patterns }] });
  return [
    { files: ['packages/server/src/domain/*.ts'], ignores: ['**/*.test.ts'], rules: rule(domainRule('../')) },
    { files: ['packages/server/src/domain/*/*.ts'], ignores: ['**/*.test.ts'], rules: rule(domainRule('../../')) },
    {
      files: ['prisma/**/*.ts'],
      rules: rule({
        group: ['@works-api/server', '@works-api/server/**', '**/packages/**'],
        message: 'The database package imports nothing of the server: the server imports it.',
      }),
    },
    {
      files: ['packages/server/src/config.ts'],
      rules: rule({
        regex: '^@works-api/prisma(?!/(target|encryption-keys)$)',
        message:
          'The configuration reads where the database is (@works-api/prisma/target) and its keys (/encryption-keys), and loads no database code.',
      }),
    },
  ];
}

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'prisma/src/generated/**',
      'packages/api-types/src/schema.d.ts',
      // Prisma's own configuration, outside the server's TypeScript project (Prisma loads and checks it).
      'prisma/prisma.config.ts',
      'bench-results/**',
      '.data/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['packages/client/tsup.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `void promise` marks a promise deliberately not awaited.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Express handlers may be async: Express 5 passes their rejections on to the error handler.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // A variable the signal handler reads before start-up assigns it is not a constant.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests read loosely typed bodies on purpose (the server's response validation has checked their shape).
    files: ['**/test/**/*.ts', '**/*.test.ts', '**/test-d/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes implement promise-returning interfaces without anything to await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // A date written into a test passes one day, and the test with it (CI went red on 2026-12-01). The fields the
    // contract wants in the future take a moment derived from the clock (test/support/clock.ts), never a literal.
    files: ['**/test/**/*.ts', '**/e2e/**/*.ts', '**/*.test.ts', '**/*.test.mjs', 'packages/bench/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          `Property[key.name=${FUTURE_ONLY_FIELDS}] > Literal[value=${WRITTEN_DATE}]`,
          `Property[key.value=${FUTURE_ONLY_FIELDS}] > Literal[value=${WRITTEN_DATE}]`,
          `Property[key.name=${FUTURE_ONLY_FIELDS}] > TemplateLiteral > TemplateElement[value.raw=${WRITTEN_DATE}]`,
          `Property[key.value=${FUTURE_ONLY_FIELDS}] > TemplateLiteral > TemplateElement[value.raw=${WRITTEN_DATE}]`,
        ].map((selector) => ({
          selector,
          message:
            'A future-only field (dueAt, expiresAt) takes a moment derived from the clock the test runs under (daysFromNow() in test/support/clock.ts), not a written date that will pass.',
        })),
      ],
    },
  },
  {
    // node:test's describe() and it() return promises its runner tracks.
    files: ['packages/bench/src/**/*.test.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  // The layers, as import rules. The domain (the rules) knows nothing of how it is served, mailed, watched or
  // started; the database package nothing of the server; the configuration nothing of the database but the two
  // leaves that describe where it is and read its keys.
  ...layerRules(),
  {
    // No hand-written source file over 400 lines: a file that grows past it holds two concerns. Tests are exempt
    // (a suite of one feature's cases reads best whole).
    files: ['packages/*/src/**/*.{ts,tsx}', 'prisma/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // The server holds the rules; every statement is the database package's (prisma/src/statements/<resource>.ts),
    // sent with its one send function: no SQL text, no Prisma client in the server (tests aside). Transactions stay
    // the domain's (which statements go together, and the checks between them under the transaction's locks), begun
    // with the database package's `inTransaction`, never with the client's `$transaction`.
    files: ['packages/server/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='@works-api/prisma'] ImportSpecifier[imported.name=/^(sendStatement|namedStatement)$/]",
          message: STATEMENT_MESSAGE,
        },
        {
          selector: 'MemberExpression[property.name="prisma"]',
          message: `The Prisma client is the database package's. ${STATEMENT_MESSAGE} Transactions: inTransaction.`,
        },
        {
          selector: `CallExpression[callee.type="MemberExpression"][callee.object.type="MemberExpression"][callee.object.object.type!="ThisExpression"][callee.property.name=/^(${PRISMA_QUERY_METHODS.join('|')})$/]`,
          message: `Prisma's query API is the database package's. ${STATEMENT_MESSAGE}`,
        },
        {
          selector:
            "ImportDeclaration[source.value='@works-api/prisma/client'][importKind!='type'] ImportSpecifier[importKind!='type']",
          message: "The Prisma client is the database package's: import its types only.",
        },
        {
          selector:
            'MemberExpression[property.name=/^\\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe|transaction)$/]',
          message: `${STATEMENT_MESSAGE} Transactions: inTransaction.`,
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.cjs', '**/jest.config.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
  prettier,
);
