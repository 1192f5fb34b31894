import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * Served by the API server at /console (same origin: no CORS). `pnpm dev` proxies the API to a server started
 * separately (`API_URL`, default http://127.0.0.1:3000), so the console talks to the same paths in both.
 */
const apiUrl = process.env.API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    target: 'es2022',
    // The manifest names the entry chunk and its static imports: scripts/check-budget.mjs measures those.
    manifest: true,
  },
  server: {
    host: '127.0.0.1',
    port: Number(process.env.CONSOLE_DEV_PORT ?? 5173),
    strictPort: true,
    proxy: { '/v1': { target: apiUrl, changeOrigin: false } },
  },
});
