import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { offlineUrlsPlugin } from './scripts/offline-urls.mjs';

// The build is embedded into the Go binary (go:embed dist), so it must be self-contained: no CDN,
// no external fonts, hashed file names under assets/ (served as immutable by playground.go).
export default defineConfig({
  // Relative asset URLs, so the playground also works when mounted under a path prefix.
  base: './',
  resolve: {
    // The explorer forks through @forkgraph/client, built from its TypeScript sources in this
    // repository (clients/typescript/src, a build input); its graphql-ws and React are this
    // project's, so the bundle holds one copy of each.
    alias: { '@forkgraph/client': fileURLToPath(new URL('../../clients/typescript/src/index.ts', import.meta.url)) },
    dedupe: ['graphql-ws', 'react', 'react-dom'],
  },
  plugins: [offlineUrlsPlugin()],
  // React's automatic JSX runtime, compiled by vite's own transformer (no babel plugin needed).
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    sourcemap: false,
    // Small assets may be inlined as data: URLs; the CSP allows data: for images and fonts only.
    assetsInlineLimit: 4096,
    // GraphiQL is one lazily loaded chunk of several hundred kB; that is expected.
    chunkSizeWarningLimit: 1500,
    modulePreload: { polyfill: false },
    rollupOptions: {
      // framer-motion and headless UI mark modules "use client" for React Server Components; that
      // directive means nothing in a client-only bundle, so don't drown the build log in it.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
