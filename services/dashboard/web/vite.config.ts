// Vite's configuration of the web app: Preact's JSX through Vite's own transform (no plugin), hashed assets
// under /assets/ (the dashboard service serves them as immutable), and, for `npm run dev -w
// @tally/dashboard-web`, the read API proxied to a running dashboard (DASHBOARD_URL, default npm start's).
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': process.env.DASHBOARD_URL ?? 'http://127.0.0.1:8082' },
  },
});
