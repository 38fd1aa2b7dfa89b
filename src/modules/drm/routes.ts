import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as policies from './policies.ts';
import * as s from './schemas.ts';
import { aneviaKeys, getCertificate, putCertificate } from './service.ts';
import * as stats from './stats.ts';
import { createToken } from './tokens.ts';

/** Policies, settings, tokens, statistics and the JSON key operations: tenant operations with the tenant's API key. */
export const drmRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['DRM'];
  const db = ctx.db;

  app.get(
    '/drm/v1/policies',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List DRM policies',
        description: "Lists the tenant's DRM policies, oldest first.",
        querystring: s.PolicyListQuery,
        response: withErrors({ 200: s.PolicyList }),
      },
    },
    (req) => policies.listPolicies(db, req.principal.tenantId, req.query),
  );
  app.get(
    '/drm/v1/policies/templates',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List DRM policy templates',
        description: 'Lists the ready-made policies a new policy can start from (templateId).',
        querystring: s.PolicyListQuery,
        response: withErrors({ 200: s.PolicyTemplateList }),
      },
    },
    (req) => policies.listPolicyTemplates(req.query),
  );
  app.post(
    '/drm/v1/policies',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Create DRM policy',
        description: 'Creates a policy: license duration, rental window, playback duration, persistence, allowed outputs, concurrent streams.',
        body: s.PolicyCreate,
        response: withErrors({ 201: s.Policy }),
      },
    },
    async (req, reply) => reply.status(201).send(await policies.createPolicy(db, req.principal.tenantId, req.body)),
  );
  app.get(
    '/drm/v1/policies/:id',
    {
      config: { access: 'read' },
      schema: { tags, summary: 'Get DRM policy', description: 'Returns one policy.', params: s.PolicyParams, response: withErrors({ 200: s.Policy }) },
    },
    (req) => policies.getPolicy(db, req.principal.tenantId, req.params.id),
  );
  app.patch(
    '/drm/v1/policies/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update DRM policy',
        description: 'Changes the fields given; licenses already issued keep the rules they were issued under.',
        params: s.PolicyParams,
        body: s.PolicyUpdate,
        response: withErrors({ 200: s.Policy }),
      },
    },
    (req) => policies.updatePolicy(db, req.principal.tenantId, req.params.id, req.body),
  );
  app.delete(
    '/drm/v1/policies/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Delete DRM policy',
        description: 'Deletes a policy; tokens naming it get no more licenses.',
        params: s.PolicyParams,
        response: withErrors({ 204: { type: 'null' } }),
      },
    },
    async (req, reply) => {
      await policies.deletePolicy(db, req.principal.tenantId, req.params.id);
      return reply.status(204).send();
    },
  );

  app.get(
    '/drm/v1/settings',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get DRM settings',
        description: "The tenant's DRM settings: default policy, token lifetime.",
        response: withErrors({ 200: s.Settings }),
      },
    },
    (req) => policies.getSettings(db, req.principal.tenantId),
  );
  app.patch(
    '/drm/v1/settings',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update DRM settings',
        description: 'Changes the fields given.',
        body: s.SettingsUpdate,
        response: withErrors({ 200: s.Settings }),
      },
    },
    (req) => policies.updateSettings(db, req.principal.tenantId, req.body),
  );

  app.post(
    '/drm/v1/tokens',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Get DRM token',
        description: 'A signed, short-lived token (JWT) that lets one viewer obtain licenses for one content under one policy.',
        body: s.TokenRequest,
        response: withErrors({ 200: s.TokenResponse }),
      },
    },
    (req) => createToken(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/drm/v1/keys',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Get content keys (Anevia-style)',
        description: 'Content keys of a content id in plain JSON, with the PSSH and signalling of each DRM system: for packagers without CPIX.',
        body: s.AneviaKeyRequest,
        response: withErrors({ 200: s.AneviaKeyResponse }),
      },
    },
    (req) => aneviaKeys(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/drm/v1/certificate',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get DRM certificate',
        description: 'The certificate SPEKE answers are encrypted to (CPIX DeliveryKey).',
        response: withErrors({ 200: s.Certificate }),
      },
    },
    (req) => getCertificate(ctx, req.principal.tenantId),
  );
  app.put(
    '/drm/v1/certificate',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Set DRM certificate',
        description: 'Sets (or, with null, removes) the packager certificate: once set, SPEKE answers keys only encrypted to it.',
        body: s.CertificateUpdate,
        response: withErrors({ 200: s.Certificate, 204: { type: 'null' } }),
      },
    },
    async (req, reply) => {
      const out = await putCertificate(ctx, req.principal.tenantId, req.body.certificate);
      return out === null ? reply.status(204).send() : out;
    },
  );

  const statsRoute = <Q, R>(path: string, summary: string, description: string, querystring: Q, response: R, fn: (tenantId: string, q: never) => unknown) =>
    app.get(
      `/drm/v1/statistics/${path}`,
      {
        config: { access: 'read' },
        schema: { tags, summary, description, querystring: querystring as never, response: withErrors({ 200: response as never }) },
      },
      (req) => fn(req.principal.tenantId, req.query as never),
    );
  statsRoute('license-error-codes', 'Get license error codes', 'Refused license requests by error code in a time range.', s.StatsQuery, s.ErrorCodes, (t, q) =>
    stats.licenseErrorCodes(db, t, q),
  );
  statsRoute(
    'license-requests',
    'List license requests',
    'The license server log in a time range, newest first.',
    s.StatsPagedQuery,
    s.LicenseRequestList,
    (t, q) => stats.licenseRequests(db, t, q),
  );
  statsRoute('license-count', 'Get license count', 'Licenses granted in a time range, in total and per type.', s.StatsQuery, s.LicenseCount, (t, q) =>
    stats.licenseCount(db, t, q),
  );
  statsRoute(
    'requests-histogram',
    'Get requests histogram',
    'License requests per minute, hour or day in a time range.',
    s.HistogramQuery,
    s.Histogram,
    (t, q) => stats.requestsHistogram(db, t, q),
  );
  statsRoute(
    'license-metrics',
    'Get license metrics',
    'Requests, licenses, refusals, distinct viewers and contents in a time range.',
    s.StatsQuery,
    s.Metrics,
    (t, q) => stats.licenseMetrics(db, t, q),
  );
};
