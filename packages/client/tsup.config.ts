import { defineConfig } from 'tsup';

// ESM and CJS builds with their own declarations. The generated API types (@works-api/api-types, not published)
// are inlined into the declarations so the package stands alone; openapi-fetch stays a dependency.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'es2022',
  platform: 'neutral',
  dts: { resolve: ['@works-api/api-types'] },
  sourcemap: true,
  clean: true,
});
