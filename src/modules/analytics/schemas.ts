import { Type } from 'typebox';
import { DateTime } from '../../platform/schemas.ts';
import { DIMENSION_NAMES, INTERVAL_NAMES, OPERATORS } from './dimensions.ts';

const Dimension = Type.Enum([...DIMENSION_NAMES], { description: 'A dimension of the catalogue (docs/decisions/analytics.md)' });

const Filter = Type.Object({
  name: Dimension,
  operator: Type.Enum([...OPERATORS]),
  value: Type.Unknown({ description: 'A number or a string as the dimension is; an array of them for IN' }),
});

const Common = {
  start: Type.Optional(DateTime),
  end: Type.Optional(DateTime),
  filters: Type.Optional(Type.Array(Filter, { maxItems: 20 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 100 })),
};

const QueryFields = {
  ...Common,
  orderBy: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ maxLength: 64, description: 'INTERVAL, FUNCTION or a dimension of groupBy' }),
        order: Type.Enum(['ASC', 'DESC']),
      }),
      { maxItems: 10 },
    ),
  ),
  interval: Type.Optional(Type.Enum([...INTERVAL_NAMES])),
  groupBy: Type.Optional(Type.Array(Dimension, { maxItems: 5 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  includeContext: Type.Optional(Type.Boolean()),
};

/** The request body of the metrics operation (max concurrent viewers): no dimension to aggregate. */
export const AnalyticsQuery = Type.Object({ ...QueryFields, dimension: Type.Optional(Dimension) });
/** The request body of the queries and ads operations (spec, "Streaming: analytics"): the dimension they aggregate. */
export const AggregateQuery = Type.Object({ ...QueryFields, dimension: Dimension });

export const ImpressionsQuery = Type.Object(Common);

export const AnalyticsResult = Type.Object({
  rowCount: Type.Integer(),
  rows: Type.Array(Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]))),
  columnLabels: Type.Array(Type.Object({ key: Type.String(), label: Type.String() })),
  contextDescription: Type.Array(Type.Object({ label: Type.String(), description: Type.String() })),
});

export const ImpressionList = Type.Object({
  impressions: Type.Array(Type.Object({ impressionId: Type.String() })),
});
