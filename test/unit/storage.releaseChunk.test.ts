import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { releaseChunk } from '../../src/storage/releaseChunk.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** PUTs `body` to a server whose handler runs `onData` on each chunk of the request body; answers once the answer has come. */
async function put(body: Buffer, onData: (req: IncomingMessage, chunk: Buffer) => void): Promise<void> {
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => onData(req, chunk));
    req.on('end', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await new Promise<void>((resolve, reject) => {
      const req = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'PUT' }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  } finally {
    server.close();
  }
}

describe('releaseChunk', () => {
  it('frees each chunk of an HTTP request body once copied, and the copies hold every byte', async () => {
    const data = randomBytes(4 * 1024 * 1024 + 123);
    const copies: Buffer[] = [];
    const left: number[] = [];
    await put(data, (req, chunk) => {
      copies.push(Buffer.from(chunk));
      const buffer = chunk.buffer;
      releaseChunk(req, chunk);
      left.push(buffer.byteLength);
    });
    expect(md5(Buffer.concat(copies))).toBe(md5(data));
    expect(left.length).toBeGreaterThan(10);
    expect(left.every((n) => n === 0)).toBe(true);
  });

  it('leaves alone a body that another listener also reads, and a chunk that is part of a larger buffer', async () => {
    const left: number[] = [];
    await put(randomBytes(256 * 1024), (req, chunk) => {
      const buffer = chunk.buffer;
      releaseChunk(req, chunk.subarray(1));
      left.push(buffer.byteLength);
      if (req.listenerCount('data') === 1) req.on('data', () => {});
      releaseChunk(req, chunk);
      left.push(buffer.byteLength);
    });
    expect(left.length).toBeGreaterThan(2);
    expect(left.every((n) => n > 0)).toBe(true);
  });

  it('leaves alone the chunks of a stream that is not an HTTP request', () => {
    const whole = randomBytes(65536);
    const copy = Buffer.from(whole);
    const stream = Readable.from([whole]);
    stream.on('data', () => {});
    releaseChunk(stream, whole);
    expect(whole.equals(copy)).toBe(true);
  });
});
