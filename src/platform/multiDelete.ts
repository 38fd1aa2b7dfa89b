import { Type } from 'typebox';
import { ApiError } from './errors.ts';

export const MultiDeleteBody = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 1000 });

export const MultiDeleteResult = Type.Record(
  Type.String(),
  Type.Object({
    status: Type.Object({ code: Type.String(), status: Type.Integer(), message: Type.String() }),
    success: Type.Boolean(),
  }),
);

export type MultiDeleteResultBody = Record<string, { status: { code: string; status: number; message: string }; success: boolean }>;

/** Deletes each id on its own: one failing id never fails the others. Ids are handled in order, duplicates once. */
export async function multiDelete(ids: string[], deleteOne: (id: string) => Promise<void>): Promise<MultiDeleteResultBody> {
  const result: MultiDeleteResultBody = {};
  for (const id of new Set(ids)) {
    try {
      await deleteOne(id);
      result[id] = { status: { code: 'success', status: 200, message: 'Deleted' }, success: true };
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, 'internal_error', 'The item could not be deleted');
      result[id] = { status: { code: err.code, status: err.httpStatus, message: err.message }, success: false };
    }
  }
  return result;
}
