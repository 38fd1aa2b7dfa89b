import { afterAll, beforeAll, expect, it } from 'vitest';
import { compileEveryRoute } from '../src/platform/lazyCompile.ts';
import { ajvOptions, buildValidator } from '../src/platform/validation.ts';
import { describeOnDb, startInProcess, type TestPlatform } from './helpers/platform.ts';

// Validators and serializers are compiled on a route's first use (src/platform/lazyCompile.ts): a schema that cannot
// compile would fail its operation's first request instead of the start. Here every one is compiled.
describeOnDb('pglite', 'route schemas', (kind) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startInProcess(kind);
    await p.app.ready();
  });
  afterAll(() => p?.stop());

  it('every route validator and response serializer compiles', () => {
    const compiled = compileEveryRoute(p.app, buildValidator as never, ajvOptions);
    // ~110 operations, most with a body or params and two or more documented answers.
    expect(compiled).toBeGreaterThan(300);
  });
});
