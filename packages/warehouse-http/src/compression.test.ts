// Request and response compression: several LZ4 or zstd frames in one body (clickhouse-connect sends one per
// block: all must be read, not the first only), ClickHouse's compressed blocks with their checksums, the
// size limit, and the errors for what cannot be decoded.
import zlib from 'node:zlib';
import { compressFrameSync } from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import {
  chooseResponseCoding,
  decodeContent,
  decodeNativeBlocks,
  encodeNativeBlocks,
  lz4FramesDecode,
  responseEncoder,
} from './compression.ts';

const text = (n: number, seed: string) =>
  Buffer.from(Array.from({ length: n }, (_, i) => `${seed}${i}\n`).join(''));

async function encode(coding: Parameters<typeof responseEncoder>[0], chunks: Buffer[]): Promise<Buffer> {
  const encoder = responseEncoder(coding, 3);
  const out: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => encoder.on('end', resolve));
  for (const chunk of chunks) encoder.write(chunk);
  encoder.end();
  await ended;
  return Buffer.concat(out);
}

describe('HTTP content codings', () => {
  it('decodes a body of several LZ4 frames entirely', () => {
    const [a, b] = [text(5000, 'a'), text(7000, 'b')];
    const body = Buffer.concat([compressFrameSync(a), compressFrameSync(b)]);
    expect(lz4FramesDecode(body, 1e9).equals(Buffer.concat([a, b]))).toBe(true);
    expect(decodeContent(body, 'lz4', 1e9).equals(Buffer.concat([a, b]))).toBe(true);
  });

  it('decodes gzip, deflate and br, and codings applied one after another', () => {
    const data = text(1000, 'x');
    expect(decodeContent(zlib.gzipSync(data), 'gzip', 1e9).equals(data)).toBe(true);
    expect(decodeContent(zlib.deflateSync(data), 'deflate', 1e9).equals(data)).toBe(true);
    expect(decodeContent(zlib.brotliCompressSync(data), 'br', 1e9).equals(data)).toBe(true);
    const twice = zlib.gzipSync(compressFrameSync(data));
    expect(decodeContent(twice, 'lz4, gzip', 1e9).equals(data)).toBe(true);
  });

  it('refuses what it cannot decode with ClickHouse codes, and bodies over the limit', () => {
    expect(() => decodeContent(Buffer.from('not gzip'), 'gzip', 1e9)).toThrow(/CANNOT_DECOMPRESS/);
    expect(() => decodeContent(Buffer.from('x'), 'xz', 1e9)).toThrow(/NOT_IMPLEMENTED/);
    expect(() => decodeContent(Buffer.from('x'), 'compress9', 1e9)).toThrow(/BAD_ARGUMENTS/);
    expect(() => decodeContent(zlib.gzipSync(Buffer.alloc(10_000)), 'gzip', 1000)).toThrow(
      /QUERY_IS_TOO_LARGE/,
    );
  });

  it('answers in the first coding the client lists that it can produce', () => {
    expect(chooseResponseCoding('lz4,zstd,br,gzip,deflate')).toBe('lz4');
    expect(chooseResponseCoding('gzip;q=0, deflate')).toBe('deflate');
    expect(chooseResponseCoding('snappy')).toBeNull();
    expect(chooseResponseCoding(undefined)).toBeNull();
  });

  it('writes a streamed response as one LZ4 frame, and gzip, that decode to the data', async () => {
    const chunks = [text(20_000, 'p'), text(30_000, 'q')];
    const whole = Buffer.concat(chunks);
    const lz4 = await encode('lz4', chunks);
    expect(lz4FramesDecode(lz4, 1e9).equals(whole)).toBe(true);
    expect(zlib.gunzipSync(await encode('gzip', chunks)).equals(whole)).toBe(true);
  });
});

describe("ClickHouse's compressed blocks", () => {
  it('round-trips LZ4, none and (where Node has it) ZSTD, over several blocks', () => {
    const data = Buffer.concat([text(100_000, 'r'), Buffer.alloc(1_500_000, 7)]);
    for (const method of ['LZ4', 'NONE', 'ZSTD'] as const) {
      expect(decodeNativeBlocks(encodeNativeBlocks(data, method), true, 1e9).equals(data)).toBe(true);
    }
  });

  it('refuses a block whose checksum does not match, unless checksums are off', () => {
    const block = encodeNativeBlocks(text(100, 's'), 'NONE');
    block[block.length - 1] = (block.at(-1) as number) ^ 0xff;
    expect(() => decodeNativeBlocks(block, true, 1e9)).toThrow(/CHECKSUM_DOESNT_MATCH/);
    expect(decodeNativeBlocks(block, false, 1e9).length).toBe(text(100, 's').length);
  });

  it('refuses a truncated block and an unknown method', () => {
    const block = encodeNativeBlocks(text(100, 't'), 'LZ4');
    expect(() => decodeNativeBlocks(block.subarray(0, block.length - 3), true, 1e9)).toThrow(
      /CANNOT_DECOMPRESS/,
    );
    const other = Buffer.from(block);
    other[16] = 0x91;
    expect(() => decodeNativeBlocks(other, false, 1e9)).toThrow(/UNKNOWN_COMPRESSION_METHOD/);
  });
});
