import { describe, expect, it } from 'vitest';
import { fieldErrors, fieldPath } from '../../src/platform/errors.ts';

const e = (keyword: string, instancePath: string, schemaPath: string, params: Record<string, unknown> = {}) => ({
  keyword,
  instancePath,
  schemaPath,
  params,
  message: 'ajv says',
});

describe('error details: one notation, sentences', () => {
  it('names fields as JavaScript reaches them', () => {
    expect(fieldPath(['transcodedSources', 0, 'fileId'])).toBe('transcodedSources[0].fileId');
    expect(fieldPath([1, 'outputs', 2, 'id'])).toBe('[1].outputs[2].id');
    expect(fieldPath(['metadata', 'a.b'])).toBe('metadata["a.b"]');
    expect(fieldPath(['metadata', ''])).toBe('metadata[""]');
    expect(fieldPath([])).toBe('');
  });

  it("turns Ajv's instance paths and terse messages into fields and sentences", () => {
    expect(
      fieldErrors([e('type', '/transcodedSources/0/fileId', '#/properties/transcodedSources/items/properties/fileId/type', { type: 'string' })], 'body'),
    ).toEqual([{ field: 'transcodedSources[0].fileId', message: 'must be a string' }]);
    expect(fieldErrors([e('required', '/transcodedSources/0', '#/required', { missingProperty: 'fileId' })], 'body')).toEqual([
      { field: 'transcodedSources[0].fileId', message: 'is required' },
    ]);
    expect(fieldErrors([e('minLength', '/name', '#/properties/name/minLength', { limit: 1 })])).toEqual([{ field: 'name', message: 'must not be empty' }]);
    expect(fieldErrors([e('maxItems', '/tags', '#/properties/tags/maxItems', { limit: 100 })])).toEqual([
      { field: 'tags', message: 'must have at most 100 items' },
    ]);
    expect(fieldErrors([e('enum', '/roleType', '#/properties/roleType/enum', { allowedValues: ['Admin', 'Viewer'] })])).toEqual([
      { field: 'roleType', message: 'must be one of Admin, Viewer' },
    ]);
    expect(fieldErrors([e('type', '', '#/type', { type: 'array' })], 'body')).toEqual([{ field: 'body', message: 'must be an array' }]);
  });

  it('tells a failed union once ("must be a uuid or null"), or the deeper errors of its object branch', () => {
    const u = '#/properties/accessPolicyId/anyOf';
    expect(
      fieldErrors([
        e('format', '/accessPolicyId', `${u}/0/format`, { format: 'uuid' }),
        e('type', '/accessPolicyId', `${u}/1/type`, { type: 'null' }),
        e('anyOf', '/accessPolicyId', u),
      ]),
    ).toEqual([{ field: 'accessPolicyId', message: 'must be a uuid or null' }]);
    const o = '#/properties/info/anyOf';
    expect(
      fieldErrors([
        e('type', '/info/x', `${o}/0/properties/x/type`, { type: 'integer' }),
        e('type', '/info', `${o}/1/type`, { type: 'null' }),
        e('anyOf', '/info', o),
      ]),
    ).toEqual([{ field: 'info.x', message: 'must be an integer' }]);
  });
});
