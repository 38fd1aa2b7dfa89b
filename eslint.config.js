// Lint: ESLint's and typescript-eslint's recommended rules (no type information: fast enough to run on every CI).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // sdk/src/openapi.ts is generated (scripts/sdk-types.ts).
  { ignores: ['dist/', 'sdk/dist/', 'sdk/src/openapi.ts', 'data/', 'node_modules/', 'migrations/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      // `_`-prefixed parameters and variables are deliberately unused (callback signatures, destructuring to omit).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // The embed player's script runs in the viewer's browser, as served (web/player/player.js).
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        Event: 'readonly',
        crypto: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        addEventListener: 'readonly',
        navigator: 'readonly',
        Blob: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
  {
    // The console's ES modules run in the tenant's browser, as served (web/console/, docs/decisions/console.md).
    files: ['web/console/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        sessionStorage: 'readonly',
        localStorage: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        navigator: 'readonly',
        performance: 'readonly',
        confirm: 'readonly',
        setTimeout: 'readonly',
        Node: 'readonly',
        AbortController: 'readonly',
      },
    },
  },
  {
    // Tests and benchmarks read JSON answers of every shape.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
