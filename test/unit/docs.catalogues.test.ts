import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODULES } from '../../src/modules/index.ts';
import { catalogueOf } from '../../src/platform/catalogue.ts';
import { ERROR_CODES } from '../../src/platform/errorCodes.ts';

/**
 * The catalogues the docs repeat, held against the code: every error code with its status (src/platform/errorCodes.ts
 * and docs/errors.md), every setting src/config.ts reads (the README's configuration table), and every event type a
 * module declares to the compiler (the webhook catalogue the manifests make).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });

/** The rows of docs/errors.md's table of the platform's codes (the OAuth token operation's own codes come after). */
function documentedCodes(doc: string): Record<string, string> {
  const platform = doc.slice(0, doc.indexOf('## `POST /oauth/token`'));
  const rows: Record<string, string> = {};
  for (const m of platform.matchAll(/^\| `([a-z0-9_]+)` \| (\d{3}|4xx)\b[^|]*\|/gm)) rows[m[1]] = m[2];
  return rows;
}

/** The status each literal `new ApiError(<status>, '<code>'`, `notFound('<code>'` and `conflict('<code>'` gives. */
function thrownStatuses(source: string): { code: string; status: number }[] {
  return [
    ...[...source.matchAll(/new ApiError\(\s*(\d{3}),\s*'([a-z0-9_]+)'/g)].map((m) => ({ code: m[2], status: Number(m[1]) })),
    ...[...source.matchAll(/\bnotFound\(\s*'([a-z0-9_]+)'/g)].map((m) => ({ code: m[1], status: 404 })),
    ...[...source.matchAll(/\bconflict\(\s*'([a-z0-9_]+)'/g)].map((m) => ({ code: m[1], status: 409 })),
  ];
}

describe('error codes', () => {
  const catalogue = Object.entries(ERROR_CODES).map(([code, status]) => [code, String(status)]);
  const sources = sourceFiles(SRC).filter((f) => !f.endsWith('platform/errorCodes.ts'));

  it('docs/errors.md lists exactly the catalogue, each code with its status', () => {
    const documented = documentedCodes(read('docs/errors.md'));
    expect(Object.keys(documented).length).toBeGreaterThan(100);
    expect(documented).toEqual(Object.fromEntries(catalogue));
  });

  it('every code of the catalogue is answered somewhere in src/ (ApiError takes no code outside it: tsc checks that)', () => {
    const text = sources.map((f) => readFileSync(f, 'utf8')).join('\n');
    const unused = catalogue.map(([code]) => code).filter((code) => !new RegExp(`['"\`]${code}['"\`]`).test(text));
    expect(unused).toEqual([]);
  });

  it('every literal status a code is thrown with is its status in the catalogue', () => {
    const wrong = sources.flatMap((file) =>
      thrownStatuses(readFileSync(file, 'utf8'))
        .filter(({ code, status }) => {
          const listed = ERROR_CODES[code as keyof typeof ERROR_CODES];
          return listed === '4xx' ? status < 400 || status > 499 : listed !== status;
        })
        .map(({ code, status }) => `${relative(ROOT, file)}: ${code} ${status}`),
    );
    expect(wrong).toEqual([]);
  });

  it('reads the docs table and the throw sites as meant', () => {
    const doc = '| code | HTTP | when |\n| `a_b` | 404 (403 on x) | ... |\n| `c` | 4xx | ... |\n## `POST /oauth/token`\n| `d` | 400 | ... |';
    expect(documentedCodes(doc)).toEqual({ a_b: '404', c: '4xx' });
    const src = "new ApiError(\n  403,\n  'x_y',\n  'm');\nthrow notFound('z', 'Z', id);\nconflict('w', 'm')";
    expect(thrownStatuses(src)).toEqual([
      { code: 'x_y', status: 403 },
      { code: 'z', status: 404 },
      { code: 'w', status: 409 },
    ]);
  });
});

describe('settings', () => {
  /** The environment variables config.ts reads; HOME only stands in for the user's home directory. */
  const read_ = [...new Set([...read('src/config.ts').matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]))].filter((v) => v !== 'HOME');
  /** The variables the README's configuration table names in its first column. */
  const readme = read('README.md');
  const table = readme.slice(readme.indexOf('### Configuration'), readme.indexOf('\n## ', readme.indexOf('### Configuration')));
  const documented = new Set(
    table
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .flatMap((l) => [...l.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])),
  );

  it("every setting src/config.ts reads is in the README's configuration table, and the table names no other", () => {
    expect(read_.length).toBeGreaterThan(50);
    expect({ missing: read_.filter((v) => !documented.has(v)), unread: [...documented].filter((v) => !read_.includes(v)) }).toEqual({
      missing: [],
      unread: [],
    });
  });
});

describe('event types', () => {
  it('every type a module declares to EventTypes is in the webhook catalogue its manifests make (ctx.catalogue.eventTypes)', async () => {
    const declaring = sourceFiles(join(SRC, 'modules')).filter((f) => readFileSync(f, 'utf8').includes('interface EventTypes'));
    expect(declaring.length).toBeGreaterThan(5);
    const declared: string[] = [];
    for (const file of declaring) {
      const exported = (await import(file)) as Record<string, unknown>;
      const lists = Object.entries(exported).filter(([name, value]) => name.endsWith('_EVENT_TYPES') && Array.isArray(value));
      expect(lists.length, relative(ROOT, file)).toBeGreaterThan(0);
      for (const [, list] of lists) declared.push(...(list as string[]));
    }
    const catalogue = catalogueOf(MODULES).eventTypes;
    expect(declared.filter((t) => !catalogue.includes(t as never))).toEqual([]);
    expect(new Set(catalogue)).toEqual(new Set(declared));
  });
});
