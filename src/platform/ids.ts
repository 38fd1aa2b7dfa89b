import { v7 } from 'uuid';

/** Time-ordered UUIDs keep primary-key indexes append-only. */
export const newId = (): string => v7();

/** The plain 8-4-4-4-12 hex form: the one PostgreSQL's uuid type and every id we issue share (no `urn:uuid:`, no braces). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s);

