/**
 * The fields of a partial update (PATCH) that the body gives: a key left out (`undefined`) keeps the stored value,
 * `null` is a value (it clears a nullable field, as `accessPolicyId: null` removes a policy).
 */
export function given<T extends object, K extends keyof T>(patch: T, keys: readonly K[]): { [P in K]?: Exclude<T[P], undefined> } {
  const out: { [P in K]?: Exclude<T[P], undefined> } = {};
  for (const k of keys) if (patch[k] !== undefined) out[k] = patch[k] as Exclude<T[K], undefined>;
  return out;
}

/** What a catalogue item's PATCH may change besides its own fields: title, metadata, tags, attributes, access policy. */
export const CATALOGUE_FIELDS = ['title', 'metadata', 'tags', 'attributes', 'accessPolicyId'] as const;
