import { defineConfig, type Plugin } from 'vite';

/**
 * graphiql's stylesheet inlines 34 Roboto and Fira Code faces as base64 (≈ 370 KB of its 418 KB,
 * 270 KB gzipped). The console uses system fonts instead (styles.css sets GraphiQL's
 * --font-family variables), so those faces are cut at build time.
 */
function dropInlinedFonts(): Plugin {
  return {
    name: 'wirestream-drop-inlined-fonts',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]graphiql[\\/].*\.css$/.test(id)) return null;
      return { code: code.replace(/@font-face\s*\{[^}]*\}/g, ''), map: null };
    },
  };
}

// The gateway serves dist/ under /console/ (apps/gateway/src/transport/console.ts): relative asset URLs, and
// every content-hashed file in assets/ so the gateway can cache those forever and index.html never.
export default defineConfig({
  base: './',
  plugins: [dropInlinedFonts()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // GraphiQL (CodeMirror, markdown, Radix) is most of the bytes; it loads only with the playground.
    chunkSizeWarningLimit: 700,
    rolldownOptions: {
      onwarn(warning, warn) {
        // React Server Components directives ("use client") in GraphiQL's dependencies mean nothing in a static bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
