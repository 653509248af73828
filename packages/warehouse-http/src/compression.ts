// Compression on ClickHouse's HTTP interface, both ways:
//   - HTTP content codings: a request body in `Content-Encoding` gzip, deflate, br, zstd or lz4 (what the
//     clients send: clickhouse-connect compresses each insert block as its own lz4 or zstd frame, so a body
//     may hold several frames), and a response in the client's first supported `Accept-Encoding` when
//     `enable_http_compression=1`;
//   - ClickHouse's own block format (`decompress=1` for the body, `compress=1` for the result): blocks of
//     [CityHash128 v1.0.2 checksum][method][compressed size][raw size][data], methods none, LZ4 and ZSTD.
// Libraries: Node's zlib (gzip, deflate, br, and zstd where Node has it: 22.15+), lz4-napi for LZ4 blocks
// and frames (prebuilt binaries per platform, no install script), fzstd to decompress zstd on Node 20.
// A frame decoder that stops after the first frame would silently drop the rest of the body, so frames are
// split here and each one decoded; the response's LZ4 frame is written here around lz4-napi's blocks.
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { decompress as fzstdDecompress } from 'fzstd';
import { compressFrameSync, compressSync, decompressFrameSync, uncompressSync } from 'lz4-napi';
import { cityHash128Checksum } from './cityhash.ts';
import { HttpInterfaceError } from './errors.ts';

type ZstdZlib = typeof zlib & {
  zstdCompressSync?: (data: Buffer, options?: object) => Buffer;
  zstdDecompressSync?: (data: Buffer, options?: object) => Buffer;
  createZstdCompress?: (options?: object) => Transform;
  constants: typeof zlib.constants & { ZSTD_c_compressionLevel?: number };
};
const z = zlib as ZstdZlib;

/** Whether this Node can compress zstd (its zlib has zstd from 22.15 on; Node 20 does not). */
export const zstdCompressionAvailable = typeof z.createZstdCompress === 'function';

function zstdDecompress(data: Buffer, limit: number): Buffer {
  if (z.zstdDecompressSync) return z.zstdDecompressSync(data, { maxOutputLength: limit });
  const out = Buffer.from(fzstdDecompress(data));
  if (out.length > limit) throw tooLarge(limit);
  return out;
}

const tooLarge = (limit: number) =>
  new HttpInterfaceError(
    'QUERY_IS_TOO_LARGE',
    `The request body is larger than ${limit} bytes once decompressed`,
  );

// ---------------------------------------------------------------------------------------------- LZ4 frames

const LZ4_MAGIC = 0x184d2204;
const LZ4_BLOCK = 64 * 1024;
/** lz4-napi's own frame header (independent 64 KiB blocks, no checksums), so its checksum byte is right. */
const LZ4_FRAME_HEADER = compressFrameSync(Buffer.alloc(0)).subarray(0, 7);
const LZ4_END_MARK = Buffer.alloc(4);

/** The length of the LZ4 frame (or skippable frame) at `offset`. */
function lz4FrameLength(data: Buffer, offset: number): number {
  const magic = data.readUInt32LE(offset);
  if ((magic & 0xfffffff0) === 0x184d2a50) return 8 + data.readUInt32LE(offset + 4);
  if (magic !== LZ4_MAGIC) throw new Error('not an LZ4 frame');
  const flags = data[offset + 4] as number;
  let at = offset + 6 + (flags & 0x08 ? 8 : 0) + (flags & 0x01 ? 4 : 0) + 1;
  for (;;) {
    const size = data.readUInt32LE(at);
    at += 4;
    if (size === 0) break;
    at += (size & 0x7fffffff) + (flags & 0x10 ? 4 : 0);
  }
  return at + (flags & 0x04 ? 4 : 0) - offset;
}

/** Decodes a body of one or more LZ4 frames. */
export function lz4FramesDecode(data: Buffer, limit: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  let offset = 0;
  while (offset < data.length) {
    const length = lz4FrameLength(data, offset);
    if (offset + length > data.length) throw new Error('truncated LZ4 frame');
    if (data.readUInt32LE(offset) === LZ4_MAGIC) {
      const part = decompressFrameSync(data.subarray(offset, offset + length));
      total += part.length;
      if (total > limit) throw tooLarge(limit);
      parts.push(part);
    }
    offset += length;
  }
  return Buffer.concat(parts);
}

/** A raw LZ4 block (lz4-napi prepends the raw size: taken off). */
const lz4Block = (data: Buffer) => compressSync(data).subarray(4);

/** One LZ4 frame written as the data comes, 64 KiB blocks, for streamed responses. */
class Lz4FrameEncoder extends Transform {
  #started = false;
  override _transform(chunk: Buffer, _: BufferEncoding, done: TransformCallback): void {
    if (!this.#started) {
      this.push(LZ4_FRAME_HEADER);
      this.#started = true;
    }
    for (let at = 0; at < chunk.length; at += LZ4_BLOCK) {
      const raw = chunk.subarray(at, at + LZ4_BLOCK);
      const packed = lz4Block(raw);
      const stored = packed.length < raw.length;
      const size = Buffer.alloc(4);
      size.writeUInt32LE(stored ? packed.length : (raw.length | 0x80000000) >>> 0);
      this.push(size);
      this.push(stored ? packed : raw);
    }
    done();
  }
  override _flush(done: TransformCallback): void {
    if (!this.#started) this.push(LZ4_FRAME_HEADER);
    this.push(LZ4_END_MARK);
    done();
  }
}

// ------------------------------------------------------------------------------------ HTTP content codings

/** Decodes a request body by its Content-Encoding (codings listed in the order they were applied). */
export function decodeContent(body: Buffer, header: string | undefined, limit: number): Buffer {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  let data = body;
  for (const coding of codings.reverse()) {
    try {
      switch (coding) {
        case 'gzip':
        case 'x-gzip':
          data = zlib.gunzipSync(data, { maxOutputLength: limit });
          break;
        case 'deflate':
          data = zlib.inflateSync(data, { maxOutputLength: limit });
          break;
        case 'br':
          data = zlib.brotliDecompressSync(data, { maxOutputLength: limit });
          break;
        case 'zstd':
          data = zstdDecompress(data, limit);
          break;
        case 'lz4':
          data = lz4FramesDecode(data, limit);
          break;
        case 'xz':
        case 'bz2':
        case 'snappy':
          throw new HttpInterfaceError(
            'NOT_IMPLEMENTED',
            `Content-Encoding '${coding}' is not supported here`,
          );
        default:
          throw new HttpInterfaceError('BAD_ARGUMENTS', `Unknown Content-Encoding '${coding}'`);
      }
    } catch (error) {
      if (error instanceof HttpInterfaceError) throw error;
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit);
      throw new HttpInterfaceError('CANNOT_DECOMPRESS', `Cannot decompress the request body as ${coding}`, {
        cause: error,
      });
    }
  }
  return data;
}

export type ResponseCoding = 'gzip' | 'deflate' | 'br' | 'zstd' | 'lz4';

/** The client's first listed coding that this server can produce (a `q=0` excludes one). */
export function chooseResponseCoding(acceptEncoding: string | undefined): ResponseCoding | null {
  for (const entry of (acceptEncoding ?? '').split(',')) {
    const [name = '', ...params] = entry.trim().toLowerCase().split(';');
    if (params.some((p) => /^\s*q=0(?:\.0*)?\s*$/.test(p))) continue;
    if (name === 'gzip' || name === 'deflate' || name === 'br' || name === 'lz4') return name;
    if (name === 'x-gzip') return 'gzip';
    if (name === 'zstd' && zstdCompressionAvailable) return 'zstd';
  }
  return null;
}

/** A stream compressing a response in `coding` at ClickHouse's `http_zlib_compression_level` (1–9). */
export function responseEncoder(coding: ResponseCoding, level: number): Transform {
  switch (coding) {
    case 'gzip':
      return zlib.createGzip({ level });
    case 'deflate':
      return zlib.createDeflate({ level });
    case 'br':
      return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level } });
    case 'zstd':
      return (z.createZstdCompress as (o: object) => Transform)({
        params: { [z.constants.ZSTD_c_compressionLevel as number]: level },
      });
    case 'lz4':
      return new Lz4FrameEncoder();
  }
}

// ------------------------------------------------------------------------ ClickHouse's compressed blocks

const METHOD_NONE = 0x02;
const METHOD_LZ4 = 0x82;
const METHOD_ZSTD = 0x90;
const HEADER = 9;
/** ClickHouse's max_compress_block_size. */
const BLOCK_SIZE = 1024 * 1024;

/** Decodes a body in ClickHouse's compressed block format (`decompress=1`). */
export function decodeNativeBlocks(data: Buffer, verifyChecksums: boolean, limit: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  let at = 0;
  while (at < data.length) {
    if (at + 16 + HEADER > data.length) {
      throw new HttpInterfaceError(
        'CANNOT_DECOMPRESS',
        'Cannot decompress: the compressed block is truncated',
      );
    }
    const method = data[at + 16] as number;
    const compressedSize = data.readUInt32LE(at + 17);
    const rawSize = data.readUInt32LE(at + 21);
    if (compressedSize < HEADER || at + 16 + compressedSize > data.length) {
      throw new HttpInterfaceError(
        'CANNOT_DECOMPRESS',
        'Cannot decompress: the compressed block is truncated',
      );
    }
    const block = data.subarray(at + 16, at + 16 + compressedSize);
    if (verifyChecksums && !cityHash128Checksum(block).equals(data.subarray(at, at + 16))) {
      throw new HttpInterfaceError(
        'CHECKSUM_DOESNT_MATCH',
        "Checksum doesn't match: corrupted data. Reference: " +
          `${data.subarray(at, at + 16).toString('hex')}. Actual: ${cityHash128Checksum(block).toString('hex')}`,
      );
    }
    total += rawSize;
    if (total > limit) throw tooLarge(limit);
    const payload = block.subarray(HEADER);
    let raw: Buffer;
    try {
      if (method === METHOD_NONE) raw = payload;
      else if (method === METHOD_LZ4) {
        const sized = Buffer.alloc(4 + payload.length);
        sized.writeUInt32LE(rawSize);
        payload.copy(sized, 4);
        raw = uncompressSync(sized);
      } else if (method === METHOD_ZSTD) raw = zstdDecompress(payload, rawSize);
      else {
        throw new HttpInterfaceError(
          'UNKNOWN_COMPRESSION_METHOD',
          `Unknown compression method 0x${method.toString(16)} (only none, LZ4 and ZSTD are supported here)`,
        );
      }
    } catch (error) {
      if (error instanceof HttpInterfaceError) throw error;
      throw new HttpInterfaceError('CANNOT_DECOMPRESS', 'Cannot decompress a block of the request body', {
        cause: error,
      });
    }
    if (raw.length !== rawSize) {
      throw new HttpInterfaceError(
        'CANNOT_DECOMPRESS',
        'Cannot decompress: the block has another size than said',
      );
    }
    parts.push(raw);
    at += 16 + compressedSize;
  }
  return Buffer.concat(parts);
}

export type NativeMethod = 'LZ4' | 'ZSTD' | 'NONE';

function nativeBlock(raw: Buffer, method: NativeMethod, level: number): Buffer {
  let payload: Buffer;
  let code: number;
  if (method === 'ZSTD' && z.zstdCompressSync) {
    payload = z.zstdCompressSync(raw, { params: { [z.constants.ZSTD_c_compressionLevel as number]: level } });
    code = METHOD_ZSTD;
  } else if (method === 'NONE') {
    payload = raw;
    code = METHOD_NONE;
  } else {
    payload = lz4Block(raw);
    code = METHOD_LZ4;
  }
  const block = Buffer.alloc(16 + HEADER + payload.length);
  block[16] = code;
  block.writeUInt32LE(HEADER + payload.length, 17);
  block.writeUInt32LE(raw.length, 21);
  payload.copy(block, 16 + HEADER);
  cityHash128Checksum(block.subarray(16)).copy(block, 0);
  return block;
}

/**
 * Writes the response in ClickHouse's compressed blocks (`compress=1`), by `network_compression_method`
 * (LZ4 by default; ZSTD where Node can compress it, else LZ4: each block names its method, so any client
 * of the format reads it).
 */
export class NativeBlockEncoder extends Transform {
  readonly #method: NativeMethod;
  readonly #level: number;
  constructor(method: NativeMethod, level: number) {
    super();
    this.#method = method;
    this.#level = level;
  }
  override _transform(chunk: Buffer, _: BufferEncoding, done: TransformCallback): void {
    for (let at = 0; at < chunk.length; at += BLOCK_SIZE) {
      this.push(nativeBlock(chunk.subarray(at, at + BLOCK_SIZE), this.#method, this.#level));
    }
    done();
  }
}

/** The whole of `data` in ClickHouse's compressed blocks (what NativeBlockEncoder streams). */
export function encodeNativeBlocks(data: Buffer, method: NativeMethod, level = 1): Buffer {
  const blocks: Buffer[] = [];
  for (let at = 0; at < data.length; at += BLOCK_SIZE) {
    blocks.push(nativeBlock(data.subarray(at, at + BLOCK_SIZE), method, level));
  }
  return Buffer.concat(blocks);
}
