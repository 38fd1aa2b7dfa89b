import { and, count, eq, getTableColumns, inArray } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { FILE_TYPE_EXTENSIONS } from '../../media/fileTypes.ts';
import { validationError } from '../../platform/errors.ts';
import { arrayParam, dateRange, oneOf, hasAllAttributes, hasAllTags, textSearch } from '../../platform/filters.ts';
import { isUuid } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { FILE_STATUSES, presentSummary } from './files.service.ts';
import { vodFiles } from './files.tables.ts';

export interface FileListRequest extends PageRequest {
  fileType?: string;
  status?: string;
  statuses?: string[];
  ids?: string[];
  createDateStart?: string;
  createDateEnd?: string;
  lastModificationDateStart?: string;
  lastModificationDateEnd?: string;
  tags?: string[];
  attributes?: string[];
  allowedExtensionsFile?: string[];
}

const SORTS = {
  CreateDate: vodFiles.createDate,
  LastModificationDate: vodFiles.lastModificationDate,
  FileSize: vodFiles.fileSize,
  'Metadata.FriendlyName': vodFiles.friendlyName,
  FriendlyName: vodFiles.friendlyName,
  Name: vodFiles.name,
  Status: vodFiles.status,
  Id: vodFiles.id,
};

/** A list shows a file's summary: the kept probe (`media_info`, kilobytes a file) is an encode's, not read here. */
const { mediaInfo: _probe, ...LISTED } = getTableColumns(vodFiles);

export async function listFiles(db: Queryable, tenantId: string, req: FileListRequest) {
  const fileTypes = Object.keys(FILE_TYPE_EXTENSIONS);
  const statuses = [...(req.status ? [req.status] : []), ...arrayParam(req.statuses)].map((s) => oneOf('statuses', s, FILE_STATUSES));
  const ids = arrayParam(req.ids);
  const bad = ids.find((id) => !isUuid(id));
  if (bad) throw validationError('ids', `"${bad}" is not a uuid`);
  const extensions = arrayParam(req.allowedExtensionsFile).map((e) => (e.startsWith('.') ? e : `.${e}`).toLowerCase());

  const where = and(
    eq(vodFiles.tenantId, tenantId),
    req.fileType ? eq(vodFiles.fileTypes, oneOf('fileType', req.fileType, fileTypes)) : undefined,
    statuses.length ? inArray(vodFiles.status, statuses) : undefined,
    ids.length ? inArray(vodFiles.id, ids) : undefined,
    dateRange(vodFiles.createDate, req.createDateStart, req.createDateEnd),
    dateRange(vodFiles.lastModificationDate, req.lastModificationDateStart, req.lastModificationDateEnd),
    hasAllTags(vodFiles.tags, req.tags),
    hasAllAttributes(vodFiles.attributes, req.attributes),
    extensions.length ? inArray(vodFiles.extension, extensions) : undefined,
    textSearch(req.query, vodFiles.name, vodFiles.friendlyName),
  );
  const order = orderBy(req, SORTS, 'CreateDate', vodFiles.id);
  const { limit, offset } = pageWindow(req);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select(LISTED)
      .from(vodFiles)
      .where(where)
      .orderBy(...order)
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(vodFiles).where(where),
  ]);
  return envelope(rows.map(presentSummary), total, req);
}
