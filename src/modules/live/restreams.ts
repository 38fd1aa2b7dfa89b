import type { Logger } from '../../platform/logger.ts';
import type { LiveMedia, RestreamDestination, RestreamEvent, RestreamSource, RestreamStatus } from './media.ts';
import type { RestreamRow } from './tables.ts';

/** What the configuration read model shows per destination (`restreams[].rtmpDestinations[]`). */
interface DestinationStatusRow {
  status: RestreamStatus;
  lastError: string | null;
}
/** Stored per channel: restream id → its destinations' states, by index in `rtmpDestinations`. */
export type RestreamStatusRow = Record<string, DestinationStatusRow[]>;

export interface RestreamNotice {
  restreamId: string;
  destination: string;
  /** The destination URL without its stream key. */
  url: string;
  event: RestreamEvent;
}

interface Running {
  restream: RestreamRow;
  index: number;
  /** What, when it changes, restarts the destination. */
  spec: string;
  dest: RestreamDestination;
}

/**
 * A channel's restreams while it runs: one supervised destination per `rtmpDestinations` item. `apply` takes the
 * channel's restreams as stored now and touches only what changed: added destinations start, removed ones stop,
 * changed ones (url or key) restart; the others keep sending.
 */
export class ChannelRestreams {
  private readonly running = new Map<string, Running>();
  private source: RestreamSource | null = null;

  constructor(
    private readonly media: LiveMedia,
    private readonly opts: { allowPrivate: boolean; log: Logger; onChange(): void; onNotice(n: RestreamNotice): void },
  ) {}

  apply(restreams: RestreamRow[]): void {
    const media = this.media.createRestreamDestination;
    if (!media) return;
    const wanted = new Map<string, { restream: RestreamRow; index: number; spec: string }>();
    for (const r of restreams) {
      if (r.protocol !== 'RTMP') continue;
      r.rtmpDestinations.forEach((d, index) => wanted.set(`${r.id}\u0000${index}`, { restream: r, index, spec: JSON.stringify([d.url, d.streamKey]) }));
    }
    let changed = false;
    for (const [key, run] of this.running) {
      const want = wanted.get(key);
      if (want && want.spec === run.spec) {
        run.restream = want.restream;
        continue;
      }
      this.running.delete(key);
      void run.dest.stop();
      changed = true;
    }
    for (const [key, want] of wanted) {
      if (this.running.has(key)) continue;
      const d = want.restream.rtmpDestinations[want.index]!;
      const run: Running = { ...want, dest: undefined as unknown as RestreamDestination };
      run.dest = media({
        url: d.url,
        streamKey: d.streamKey,
        allowPrivate: this.opts.allowPrivate,
        log: this.opts.log.child({ restreamId: want.restream.id, destinationIndex: want.index }),
        onState: () => {
          if (this.running.get(key) === run) this.opts.onChange();
        },
        onEvent: (event) => {
          if (this.running.get(key) !== run) return;
          this.opts.onNotice({ restreamId: run.restream.id, destination: run.restream.destination, url: d.url, event });
        },
      });
      this.running.set(key, run);
      run.dest.setSource(this.source);
      changed = true;
    }
    if (changed) this.opts.onChange();
  }

  setSource(source: RestreamSource | null): void {
    this.source = source;
    for (const run of this.running.values()) run.dest.setSource(source);
  }

  /** Every destination's state, for the configuration read model. */
  statuses(): RestreamStatusRow {
    const out: RestreamStatusRow = {};
    for (const run of this.running.values()) {
      const s = run.dest.state();
      (out[run.restream.id] ??= [])[run.index] = { status: s.status, lastError: s.lastError };
    }
    return out;
  }

  /** Destinations sending now (the `restreamsActive` metric). */
  activeCount(): number {
    let n = 0;
    for (const run of this.running.values()) if (run.dest.state().status === 'Active') n++;
    return n;
  }

  async stop(): Promise<void> {
    const runs = [...this.running.values()];
    this.running.clear();
    await Promise.all(runs.map((r) => r.dest.stop()));
  }
}
