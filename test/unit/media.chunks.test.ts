import { describe, expect, it } from 'vitest';
import { chunkedMpd, dashSkeleton } from '../../src/media/chunkMpd.ts';
import { composeChunkedPlaylists, mergeSegments } from '../../src/media/chunkPlaylists.ts';
import { splitSource } from '../../src/media/chunks.ts';
import { videoEncoderArgs } from '../../src/media/ladder.ts';
import { mpdTimelines } from '../../src/media/mpdTimeline.ts';
import { ProgressParser } from '../../src/media/progress.ts';
import { testPreset } from '../helpers/media.ts';

describe('the chunked path cuts a source on segment boundaries', () => {
  it('rounds the chunk up to whole segments and leaves the last chunk open to the source end', () => {
    expect(splitSource(14_000, 3, 4)).toEqual([
      { index: 0, startS: 0, endS: 4 },
      { index: 1, startS: 4, endS: 8 },
      { index: 2, startS: 8, endS: 12 },
      { index: 3, startS: 12 },
    ]);
    expect(splitSource(120_000, 60, 4)).toEqual([
      { index: 0, startS: 0, endS: 60 },
      { index: 1, startS: 60 },
    ]);
    // A source of exactly two chunks is two chunks, not two and an empty third.
    expect(splitSource(8_000, 4, 4)).toHaveLength(2);
  });

  it('forces keyframes on the one-pass segment boundaries from a chunk whose first frame lies past its start', () => {
    const args = videoEncoderArgs(testPreset({ segmentSeconds: 4 }), [], { shiftS: 0.008 });
    expect(args[args.indexOf('-force_key_frames') + 1]).toBe('expr:gte(t,n_forced*4-0.008000)');
  });

  it('counts a chunk progress from its own start', () => {
    const seen: number[] = [];
    const parser = new ProgressParser(4000, (p) => seen.push(p), 8000);
    parser.push('out_time_us=10000000\nprogress=continue\n');
    expect(seen).toEqual([50]);
  });
});

describe('the playlists of chunks that write HLS', () => {
  const master = [
    '#EXTM3U',
    '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="eng",DEFAULT=YES,AUTOSELECT=YES,URI="audio_0/index.m3u8"',
    '#EXT-X-STREAM-INF:BANDWIDTH=1000',
    '360p/index.m3u8',
  ].join('\n');
  const seg = (uri: string, durationS: number) => ({ uri, durationS });
  const head = {
    'hls/360p/index.m3u8': [seg('c0000_00000.ts', 1), seg('c0000_00001.ts', 3)],
    'hls/audio_0/index.m3u8': [0, 1, 2, 3].map((k) => seg(`seg_${k}.ts`, 4)),
  };
  const second = { 'hls/360p/index.m3u8': [seg('c0001_00000.ts', 4)] };
  const segmentsOf = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));

  it('lists the contiguous prefix: a chunk after an unfinished one is not listed, the audio only as far as the video', () => {
    const growing = composeChunkedPlaylists(
      master,
      'hls',
      [
        { playlists: head, done: false },
        { playlists: second, done: true },
      ],
      4,
    );
    expect(growing.playable).toBe(true);
    expect(segmentsOf(growing.playlists['hls/360p/index.m3u8'])).toEqual(['c0000_00000.ts', 'c0000_00001.ts']);
    expect(segmentsOf(growing.playlists['hls/audio_0/index.m3u8'])).toEqual(['seg_0.ts']);
    expect(growing.playlists['hls/360p/index.m3u8']).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    expect(growing.playlists['hls/360p/index.m3u8']).not.toContain('#EXT-X-ENDLIST');

    const after = composeChunkedPlaylists(
      master,
      'hls',
      [
        { playlists: head, done: true },
        { playlists: second, done: false },
      ],
      4,
    );
    expect(segmentsOf(after.playlists['hls/360p/index.m3u8'])).toEqual(['c0000_00000.ts', 'c0000_00001.ts', 'c0001_00000.ts']);
    expect(segmentsOf(after.playlists['hls/audio_0/index.m3u8'])).toEqual(['seg_0.ts', 'seg_1.ts']);

    const final = composeChunkedPlaylists(
      master,
      'hls',
      [
        { playlists: head, done: true },
        { playlists: second, done: true },
      ],
      4,
      true,
    );
    expect(segmentsOf(final.playlists['hls/audio_0/index.m3u8'])).toHaveLength(4);
    expect(final.playlists['hls/360p/index.m3u8']).toMatch(/#EXT-X-PLAYLIST-TYPE:VOD[\s\S]*#EXT-X-ENDLIST\n$/);
  });

  it('is not playable before every playlist the master names has a segment', () => {
    const noAudio = { 'hls/360p/index.m3u8': head['hls/360p/index.m3u8'] };
    expect(composeChunkedPlaylists(master, 'hls', [{ playlists: noAudio, done: false }], 4).playable).toBe(false);
  });

  it('keeps what a retried chunk has not yet written again', () => {
    const recorded = { 'hls/360p/index.m3u8': [seg('a', 4), seg('b', 4)] };
    expect(mergeSegments(recorded, { 'hls/360p/index.m3u8': [seg('a', 4)] })).toEqual(recorded);
    expect(mergeSegments(recorded, { 'hls/360p/index.m3u8': [seg('a', 4), seg('b', 4), seg('c', 4)] })['hls/360p/index.m3u8']).toHaveLength(3);
  });
});

describe('the MPD of chunks that write DASH or CMAF', () => {
  // Two muxers' MPDs as ffmpeg writes them: the first chunk's video and, beside it, the whole source's audio.
  const mpd = (sets: string) => `<?xml version="1.0"?>\n<MPD type="dynamic">\n<Period id="0" start="PT0.0S">\n${sets}\n</Period>\n</MPD>\n`;
  const rep = (id: number, timescale: number, timeline: string, attrs = '') =>
    `<Representation id="${id}" mimeType="video/mp4" ${attrs}><SegmentTemplate timescale="${timescale}" initialization="c0000-init-v$RepresentationID$.m4s" media="c0000-v$RepresentationID$-$Number%05d$.m4s" startNumber="1"><SegmentTimeline>${timeline}</SegmentTimeline></SegmentTemplate></Representation>`;
  const video = mpd(
    `<AdaptationSet id="0" contentType="video">${rep(0, 12800, '<S t="0" d="12800" r="3" />')}${rep(1, 12800, '<S t="0" d="12800" r="3" />')}</AdaptationSet>`,
  );
  const audio = mpd(`<AdaptationSet id="0" contentType="audio" lang="eng">${rep(0, 48000, '<S t="0" d="192512" />')}</AdaptationSet>`);

  it('reads the timelines ffmpeg lists, with the files a $Number$ or a $Time$ template names', () => {
    const [first] = mpdTimelines(video);
    expect(first.init).toBe('c0000-init-v0.m4s');
    expect(first.segments.map((s) => [s.file, s.t, s.d])).toEqual([0, 1, 2, 3].map((k) => [`c0000-v0-0000${k + 1}.m4s`, k * 12800, 12800]));
    const timed = mpdTimelines(
      '<Representation id="3"><SegmentTemplate media="chunk-$RepresentationID$-$Time$.m4s"><S t="100" d="50" r="1" /></SegmentTemplate></Representation>',
    );
    expect(timed[0].segments.map((s) => s.file)).toEqual(['chunk-3-100.m4s', 'chunk-3-150.m4s']);
  });

  it('keeps the sets of both muxers, the audio numbered after the video, each timeline a marker under one $Time$ template', () => {
    const skeleton = dashSkeleton(video, audio);
    expect(skeleton.video).toEqual(['0', '1']);
    expect(skeleton.audio).toEqual(['2']);
    expect(skeleton.sets).toContain('<AdaptationSet id="1" contentType="audio" lang="eng">');
    expect(skeleton.sets).toContain('<!--timeline:2-->');
    expect(skeleton.sets).toContain(
      '<SegmentTemplate timescale="48000" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Time$.m4s">',
    );
    expect(skeleton.sets).not.toContain('c0000');
  });

  it('lists each segment by its time, a start after a jump and equal durations as repeats; dynamic while growing, static at the end', () => {
    const skeleton = dashSkeleton(video, undefined);
    const s = (t: number, d: number, id = 0) => ({ uri: `chunk-${id}-${t}.m4s`, durationS: d / 12800, t, d });
    const lists = new Map([
      ['dash/media_0.m3u8', [s(0, 12800), s(12800, 12800), s(25600, 25600), s(51712, 51200), s(102912, 51200)]],
      ['dash/media_1.m3u8', [s(0, 12800, 1)]],
    ]);
    const at = new Date('2026-12-01T10:00:00Z');
    const growing = chunkedMpd(skeleton, 'dash', lists, { final: false, availabilityStart: at, segmentSeconds: 4 });
    expect(growing).toContain('type="dynamic"');
    expect(growing).toContain('availabilityStartTime="2026-12-01T10:00:00.000Z"');
    expect(growing).toContain('<S t="0" d="12800" r="1" />\n<S d="25600" />\n<S t="51712" d="51200" r="1" />');
    const files = mpdTimelines(growing).flatMap((r) => r.segments.map((x) => x.file));
    expect(files).toEqual([...lists.get('dash/media_0.m3u8')!, ...lists.get('dash/media_1.m3u8')!].map((x) => x.uri));
    const final = chunkedMpd(skeleton, 'dash', lists, { final: true, availabilityStart: at, segmentSeconds: 4 });
    expect(final).toContain('type="static"');
    expect(final).not.toContain('availabilityStartTime');
  });
});
