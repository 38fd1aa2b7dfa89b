import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import type { Aggregate, AnalyticsBody } from './query.ts';
import * as s from './schemas.ts';
import { aggregate, listImpressions, maxConcurrentViewers } from './service.ts';

const OPERATIONS: { path: string; scope: 'play' | 'ad'; fn: Aggregate; summary: string }[] = [
  { path: 'queries/count', scope: 'play', fn: 'count', summary: 'Queries count' },
  { path: 'queries/sum', scope: 'play', fn: 'sum', summary: 'Queries sum' },
  { path: 'queries/avg', scope: 'play', fn: 'avg', summary: 'Queries avg' },
  { path: 'queries/median', scope: 'play', fn: 'median', summary: 'Queries median' },
  { path: 'ads/queries/count', scope: 'ad', fn: 'count', summary: 'Ads count' },
  { path: 'ads/queries/sum', scope: 'ad', fn: 'sum', summary: 'Ads sum' },
  { path: 'ads/queries/avg', scope: 'ad', fn: 'avg', summary: 'Ads avg' },
];

/** The nine analytics operations: aggregates over the tenant's beacons (docs/decisions/analytics.md). */
export const analyticsRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Streaming analytics'];
  const config = { access: 'read' as const };

  for (const op of OPERATIONS) {
    app.post(
      `/streaming/v1/analytics/${op.path}`,
      {
        config,
        schema: {
          tags,
          summary: op.summary,
          description: `The ${op.fn} of \`dimension\` over the tenant's ${op.scope === 'ad' ? 'ad ' : ''}beacons of the period, by interval and groups.`,
          body: s.AggregateQuery,
          response: withErrors({ 200: s.AnalyticsResult }),
        },
      },
      (req) => aggregate(ctx.db, req.principal.tenantId, op.scope, op.fn, req.body as AnalyticsBody),
    );
  }

  app.post(
    '/streaming/v1/analytics/metrics/max_concurrentviewers',
    {
      config,
      schema: {
        tags,
        summary: 'Max concurrent viewers',
        description: 'The most impressions playing at once in the period (per interval and groups).',
        body: s.AnalyticsQuery,
        response: withErrors({ 200: s.AnalyticsResult }),
      },
    },
    (req) => maxConcurrentViewers(ctx.db, req.principal.tenantId, req.body as AnalyticsBody),
  );

  app.post(
    '/streaming/v1/analytics/impressions',
    {
      config,
      schema: {
        tags,
        summary: 'List impressions',
        description: 'The impressions (playback sessions) of the period that pass the filters, the most recent first.',
        body: s.ImpressionsQuery,
        response: withErrors({ 200: s.ImpressionList }),
      },
    },
    (req) => listImpressions(ctx.db, req.principal.tenantId, req.body as AnalyticsBody),
  );
};
