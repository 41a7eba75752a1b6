// Builds the console (console/src) into console/dist, served by the gateway at /console
// (src/gateway/routes/console.routes.ts). Run through `npm run build:console` (scripts/build-console.js).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  logLevel: 'warn',
  // Preact's automatic JSX runtime; no plugin needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    // One JS and one CSS file: the gateway serves them from memory.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
