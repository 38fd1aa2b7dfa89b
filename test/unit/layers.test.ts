import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const MODULES = join(SRC, 'modules');
/** The rooms below the modules; they may import each other, never a module (docs/architecture.md). */
const LOWER = ['platform', 'db', 'storage', 'media', 'jobs'].map((d) => join(SRC, d));
const LOWER_FILES = ['config.ts', 'context.ts'].map((f) => join(SRC, f));

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : /\.[cm]?[jt]s$/.test(e.name) ? [path] : [];
  });

/** Every module specifier a file names: static imports and re-exports, `import()` and `import type`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const re of [/\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm]) {
    for (const m of source.matchAll(re)) found.push(m[1]);
  }
  return found;
}

/** The lower-layer files that import from src/modules, as `file -> specifier`. */
function violations(files: string[]): string[] {
  return files.flatMap((file) =>
    specifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.') && `${resolve(dirname(file), s)}/`.startsWith(`${MODULES}/`))
      .map((s) => `${relative(ROOT, file)} -> ${s}`),
  );
}

it('finds imports of every form', () => {
  const source = [
    "import { a } from '../modules/x.ts';",
    "import type { B } from '../modules/y.ts';",
    "export * from '../modules/z.ts';",
    "export { c } from '../modules/w.ts';",
    "const m = await import('../modules/v.ts');",
    "import '../modules/u.ts';",
    "import {\n  d,\n  e,\n} from '../modules/t.ts';",
  ].join('\n');
  expect(specifiers(source)).toEqual(
    expect.arrayContaining([
      '../modules/x.ts',
      '../modules/y.ts',
      '../modules/z.ts',
      '../modules/w.ts',
      '../modules/v.ts',
      '../modules/u.ts',
      '../modules/t.ts',
    ]),
  );
});

it('src/platform, src/db, src/storage, src/media and src/jobs import nothing from src/modules', () => {
  const files = [...LOWER.flatMap(sourceFiles), ...LOWER_FILES];
  expect(files.length).toBeGreaterThan(50);
  expect(violations(files)).toEqual([]);
});
