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

/** The module a path lies in (`src/modules/<name>/...`), or undefined. */
function moduleOf(path: string): string | undefined {
  const rel = relative(MODULES, path);
  return rel.startsWith('..') || !rel.includes('/') ? undefined : rel.split('/')[0];
}

/** Every import from one module into another, as `file -> specifier` with the two module names. */
function crossModuleImports(files: string[]): { file: string; specifier: string; from: string; to: string; target: string }[] {
  return files.flatMap((file) => {
    const from = moduleOf(file);
    if (!from) return [];
    return specifiers(readFileSync(file, 'utf8')).flatMap((specifier) => {
      if (!specifier.startsWith('.')) return [];
      const target = resolve(dirname(file), specifier);
      const to = moduleOf(target);
      return to && to !== from ? [{ file: relative(ROOT, file), specifier, from, to, target }] : [];
    });
  });
}

/** Imports that pass another module's front door (its `index.ts`) to reach an internal file. */
const pastFrontDoors = (imports: ReturnType<typeof crossModuleImports>): string[] =>
  imports.filter((i) => i.target !== join(MODULES, i.to, 'index.ts')).map((i) => `${i.file} -> ${i.specifier}`);

/** The cycles of a graph given as edges `a -> b`, each as the path `a -> ... -> a` (one per cycle found by search). */
function cycles(edges: Iterable<[string, string]>): string[] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of edges) next.set(a, (next.get(a) ?? new Set()).add(b));
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]) => {
    state.set(node, 'open');
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 'open') found.push([...path.slice(path.indexOf(to)), node, to].join(' -> '));
      else if (!state.has(to)) visit(to, [...path, node]);
    }
    state.set(node, 'done');
  };
  for (const node of [...next.keys()].sort()) if (!state.has(node)) visit(node, []);
  return found;
}

const moduleEdges = (imports: ReturnType<typeof crossModuleImports>): [string, string][] => [
  ...new Map(imports.map((i) => [`${i.from}>${i.to}`, [i.from, i.to] as [string, string]])).values(),
];

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

it('finds imports past a front door, and cycles between modules', () => {
  const file = (mod: string, name: string) => join(MODULES, mod, name);
  const imports = [
    { file: 'a/x.ts', specifier: '../b/index.ts', from: 'a', to: 'b', target: file('b', 'index.ts') },
    { file: 'b/y.ts', specifier: '../c/service.ts', from: 'b', to: 'c', target: file('c', 'service.ts') },
    { file: 'c/z.ts', specifier: '../a/index.ts', from: 'c', to: 'a', target: file('a', 'index.ts') },
  ];
  expect(pastFrontDoors(imports)).toEqual(['b/y.ts -> ../c/service.ts']);
  expect(cycles(moduleEdges(imports))).toEqual(['a -> b -> c -> a']);
  expect(
    cycles([
      ['a', 'b'],
      ['b', 'a'],
      ['c', 'a'],
    ]),
  ).toEqual(['a -> b -> a']);
  expect(
    cycles([
      ['a', 'b'],
      ['b', 'c'],
      ['a', 'c'],
    ]),
  ).toEqual([]);
});

const moduleNames = readdirSync(MODULES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

it('every module has a front door, index.ts, and src/modules/index.ts lists the modules through them', () => {
  expect(moduleNames.length).toBeGreaterThan(10);
  expect(moduleNames.filter((m) => !sourceFiles(join(MODULES, m)).includes(join(MODULES, m, 'index.ts')))).toEqual([]);
  const registry = specifiers(readFileSync(join(MODULES, 'index.ts'), 'utf8')).filter((s) => s.startsWith('./'));
  expect(registry.sort()).toEqual(moduleNames.map((m) => `./${m}/index.ts`).sort());
});

it('a module imports another only through its front door (index.ts), and no two modules import each other', () => {
  const imports = crossModuleImports(sourceFiles(MODULES));
  expect(imports.length).toBeGreaterThan(10);
  expect({ pastFrontDoors: pastFrontDoors(imports), cycles: cycles(moduleEdges(imports)) }).toEqual({ pastFrontDoors: [], cycles: [] });
});
