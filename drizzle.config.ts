import { defineConfig } from 'drizzle-kit';

// The platform's tables, then every module's: a new module's tables are found without editing this file.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/db/schema.ts', './src/modules/**/tables.ts', './src/modules/**/*.tables.ts'],
  out: './migrations',
});
