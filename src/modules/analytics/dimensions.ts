import { sql, type SQL } from 'drizzle-orm';

/**
 * The analytics catalogue: every dimension a query may name (in `dimension`, `filters`, `groupBy`, `orderBy`), the
 * intervals and the comparison operators. Like the error codes, it is part of the contract and listed in
 * docs/decisions/analytics.md. A dimension's SQL is a constant of this file, never text from a request: requests only
 * choose among these names, and their values travel as query parameters.
 */
export type DimensionType = 'text' | 'number';
/** `play`: the `queries/*` operations; `ad`: the `ads/queries/*` operations; `both`: either. */
type Scope = 'play' | 'ad' | 'both';

export interface Dimension {
  type: DimensionType;
  scope: Scope;
  /** The row's value. */
  expr: SQL;
  /** How `count` counts it, when not `count(expr)`. */
  count?: SQL;
  /** A ratio over the rows (a percentage): only `avg` applies, as this expression, which weighs every row right. */
  ratio?: SQL;
  label: string;
  description: string;
}

const col = (name: string) => sql.raw(name);
const text = (column: string, label: string, description: string, scope: Scope = 'both'): Dimension => ({
  type: 'text',
  scope,
  expr: col(column),
  label,
  description,
});
const num = (column: string, label: string, description: string, scope: Scope = 'play'): Dimension => ({
  type: 'number',
  scope,
  expr: col(column),
  label,
  description,
});
const ratio = (expression: string, label: string, description: string): Dimension => ({
  type: 'number',
  scope: 'play',
  expr: col('null::float8'),
  ratio: col(expression),
  label,
  description,
});

export const DIMENSIONS = {
  IMPRESSION_ID: {
    ...text('impression_id::text', 'Impression id', 'The random id of one playback session; count gives the number of impressions'),
    count: col('count(distinct impression_id)'),
  },
  ASSET_ID: text('asset_id', 'Asset id', 'The streaming asset played'),
  ASSET_TYPE: text('asset_type', 'Asset type', 'Vod, Recording, LiveChannel or LiveEvent'),
  BEACON_TYPE: text('kind', 'Beacon type', 'start, heartbeat, buffering, error, end, adStart, adEnd, adClick, adSkip, adError or cmcd'),
  PLAYER_TECH: text('player_tech', 'Player technology', 'hls.js, dash.js, native, or cmcd-hls / cmcd-dash for CMCD data'),
  BROWSER: text('browser', 'Browser', "The viewer's browser, from its User-Agent"),
  OS: text('os', 'Operating system', "The viewer's operating system, from its User-Agent"),
  DEVICE_TYPE: text('device_type', 'Device type', 'Desktop, Mobile, Tablet or TV, from the User-Agent'),
  DOMAIN: text('domain', 'Domain', 'The host of the page that embedded the player (Origin or Referer)'),
  ERROR_CODE: text('error_code', 'Error code', 'The player error of an error beacon', 'play'),
  PLAYED_SECONDS: num('played_seconds', 'Played seconds', 'Seconds of content played since the previous beacon; sum gives the watch time'),
  VIDEO_BITRATE: num('video_bitrate', 'Video bitrate', 'The bitrate (bits/s) of the rendition playing; avg gives the average bitrate'),
  BUFFERING_MS: num('buffering_ms', 'Buffering (ms)', 'The length of one rebuffering; count gives the rebuffer count'),
  STARTUP_TIME_MS: num('startup_time_ms', 'Startup time (ms)', 'From the page asking to play to the first frame (start beacons that started)'),
  EXITED_BEFORE_START: num('exited_before_start', 'Exited before start', '1 on the end beacon of an impression that never showed a frame, else 0'),
  PLAYBACK_FAILED: num('playback_failed', 'Playback failed', '1 on the end beacon of an impression that a fatal error ended, else 0'),
  REBUFFER_PERCENTAGE: ratio(
    '100 * coalesce(sum(buffering_ms), 0) / nullif(coalesce(sum(buffering_ms), 0) + 1000 * coalesce(sum(played_seconds), 0), 0)',
    'Rebuffer percentage',
    'Time spent rebuffering as a share of the time spent watching or rebuffering (avg only)',
  ),
  PLAYBACK_FAILURE_PERCENTAGE: ratio(
    '100 * avg(playback_failed)',
    'Playback failure percentage',
    'Impressions a fatal error ended, in % of ended ones (avg only)',
  ),
  EXIT_BEFORE_START_PERCENTAGE: ratio(
    '100 * avg(exited_before_start)',
    'Exits before video start',
    'Impressions left before their first frame, in % of ended ones (avg only)',
  ),
  AD_ID: text('ad_id', 'Ad id', 'The ad played', 'ad'),
  AD_POSITION: text('ad_position', 'Ad position', 'preroll, midroll or postroll', 'ad'),
  AD_PLAYED_SECONDS: num('ad_played_seconds', 'Ad played seconds', 'Seconds of the ad played (adEnd, adSkip)', 'ad'),
  AD_CLICKED: num('ad_clicked', 'Ad clicked', '1 on an adClick beacon', 'ad'),
  AD_SKIPPED: num('ad_skipped', 'Ad skipped', '1 on an adSkip beacon', 'ad'),
} satisfies Record<string, Dimension>;

export type DimensionName = keyof typeof DIMENSIONS;
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as DimensionName[];

export const INTERVALS = { MINUTE: 'minute', HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' } as const;
export type IntervalName = keyof typeof INTERVALS;
export const INTERVAL_NAMES = Object.keys(INTERVALS) as IntervalName[];

export const OPERATORS = ['EQ', 'NE', 'LT', 'LTE', 'GT', 'GTE', 'IN', 'CONTAINS'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Names `orderBy` takes beside the grouped dimensions: the interval's start and the operation's result. */
export const ORDER_NAMES = ['INTERVAL', 'FUNCTION'] as const;

/** The dimensions an operation of this scope may name. */
export const dimensionsOf = (scope: 'play' | 'ad' | 'all'): DimensionName[] =>
  DIMENSION_NAMES.filter((n) => scope === 'all' || DIMENSIONS[n].scope === 'both' || DIMENSIONS[n].scope === scope);

export const isRatio = (name: DimensionName): boolean => 'ratio' in DIMENSIONS[name];
