import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../../platform/errors.ts';

/** The repository's root, the same from `src/` and from the compiled `dist/` (both three folders down). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The console's own files: plain HTML, CSS and ES modules, served as they are (docs/decisions/console.md). */
const WEB = join(ROOT, 'web', 'console');
/** The SDK's browser build, which the console imports as ES modules; `npm ci` builds it, the image copies it. */
const SDK = join(ROOT, 'sdk', 'dist');
/** The chart library's files, from its installed npm package (no CDN), as the player serves hls.js and dash.js. */
const LIBRARIES = new Map([
  ['uPlot.esm.js', join(ROOT, 'node_modules', 'uplot', 'dist', 'uPlot.esm.js')],
  ['uPlot.min.css', join(ROOT, 'node_modules', 'uplot', 'dist', 'uPlot.min.css')],
]);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The files a folder serves, listed once at start: a request names one of them or gets 404, never a path. */
function servable(dir: string, exts: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir)) if (exts.includes(extname(name))) files.set(name, join(dir, name));
  return files;
}

/**
 * Security headers of every console file: no framing (clickjacking), no sniffing, and scripts from this origin only.
 * Images may come from anywhere: an asset's images are any http(s) URL its tenant gave, and frames and uploaded images
 * are served from the media origin (the S3 store's or a CDN's); an image runs no code.
 */
const HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: http: https:; media-src 'self' blob: data: http: https:; connect-src 'self' http: https:; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

function send(reply: FastifyReply, path: string) {
  // no-cache: the browser revalidates, so a new version of the platform is picked up at the next load.
  return reply
    .headers(HEADERS)
    .type(TYPES[extname(path)] ?? 'application/octet-stream')
    .header('cache-control', 'no-cache')
    .send(createReadStream(path));
}

/** `GET /console`: the tenant console's page, its scripts, and the SDK they call the API with. Not API operations. */
export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const web = servable(WEB, Object.keys(TYPES));
  const sdk = servable(SDK, ['.js']);
  const notFound = (what: string) => new ApiError(404, 'route_not_found', `No console file ${what}`);

  app.get('/console', { schema: { hide: true } }, async (_req, reply) => {
    const index = web.get('index.html');
    if (!index) throw notFound('index.html');
    return send(reply, index);
  });
  // One address for the page: its scripts are named by absolute paths, so either form would work, but history is simpler.
  app.get('/console/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console', 301));
  app.get<{ Params: { file: string } }>('/console/:file', { schema: { hide: true } }, async (req, reply) => {
    const path = web.get(req.params.file);
    if (!path) throw notFound(req.params.file);
    return send(reply, path);
  });
  app.get<{ Params: { file: string } }>('/console/lib/:file', { schema: { hide: true } }, async (req, reply) => {
    const path = LIBRARIES.get(req.params.file);
    if (!path) throw notFound(`lib/${req.params.file}`);
    return send(reply, path);
  });
  app.get<{ Params: { file: string } }>('/console/sdk/:file', { schema: { hide: true } }, async (req, reply) => {
    const path = sdk.get(req.params.file);
    if (!path) throw notFound(`sdk/${req.params.file}`);
    return send(reply, path);
  });
};
