// Lint: ESLint's and typescript-eslint's recommended rules (no type information: fast enough to run on every CI).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'migrations/'] },
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
        crypto: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        addEventListener: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
  {
    // Tests and benchmarks read JSON answers of every shape.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
