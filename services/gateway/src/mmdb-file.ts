// An MMDB file (MaxMind DB format 2.0: https://maxmind.github.io/MaxMind-DB/) read where it lies, with
// positioned reads through a small cache of its 4 KiB blocks, instead of read whole into the process's
// memory. DB-IP's City Lite is 128 MiB; held in memory it was anonymous memory of every gateway process,
// paid before the first request and never given back. Read with pread(2), its pages are the kernel's page
// cache: shared by every process of the host, and reclaimed under memory pressure instead of the process
// being killed. libmaxminddb maps the file for the same reasons (its default mode); Node.js cannot map a
// file, so the file is read in blocks, and the blocks a thread reads most (the top of the search tree, the
// records of the places asked for most) stay in its cache. mmdb-lib, which reads the format from a Buffer
// of the whole file, stays the reference this reader is tested against (mmdb-file.test.ts).
//
// What is read, per the format: the metadata (a map after the marker "\xAB\xCD\xEFMaxMind.com" near the
// end of the file), the search tree (node_count nodes of two records of record_size bits each, 24, 28 or
// 32; an IPv4 address in an IPv6 tree starts at the node 96 zero bits below the root), and the data
// section after the tree and its 16-byte separator (each value a control byte of type and size, then its
// payload; pointers relative to the section's start).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';

const BLOCK = 4096;
const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
/** The metadata is within this many bytes of the end (the format's limit). */
const METADATA_MAX = 128 * 1024;
const DATA_SEPARATOR = 16;
/** Decoded records kept per file (the places asked for most); cleared when full. */
const RECORD_CACHE = 4096;

/** What a reader knows of its file from the metadata. */
export interface MmdbMetadata {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
  buildEpoch: Date;
}

export type MmdbValue =
  | string
  | number
  | bigint
  | boolean
  | Buffer
  | MmdbValue[]
  | { [key: string]: MmdbValue };

/** Where a decoder reads bytes: a Buffer (the metadata) or the file through its block cache. */
interface Bytes {
  u8(at: number): number;
  slice(at: number, length: number): Buffer;
}

function unsigned(bytes: Bytes, at: number, size: number): number | bigint {
  if (size <= 6) {
    let value = 0;
    for (let i = 0; i < size; i++) value = value * 256 + bytes.u8(at + i);
    return value;
  }
  let value = 0n;
  for (let i = 0; i < size; i++) value = (value << 8n) | BigInt(bytes.u8(at + i));
  return value;
}

/**
 * The rest of a value's header after its control byte (not a pointer's): its type (an extended type's
 * from the next byte), its size (from the control byte, or from the one to three bytes after it), and
 * where its payload starts.
 */
function sizeOf(bytes: Bytes, control: number, type: number, at: number): [number, number, number] {
  if (type === 0) type = 7 + bytes.u8(at++);
  const size = control & 31;
  if (size < 29) return [type, size, at];
  if (size === 29) return [type, 29 + bytes.u8(at), at + 1];
  if (size === 30) return [type, 285 + (unsigned(bytes, at, 2) as number), at + 2];
  return [type, 65821 + (unsigned(bytes, at, 3) as number), at + 3];
}

/**
 * Decodes the value at `at`; pointers are relative to `pointerBase`. Returns it and the position after it.
 * With `fields`, a map keeps only those keys (the others' values are skipped, not built).
 */
function decode(
  bytes: Bytes,
  at: number,
  pointerBase: number,
  fields?: ReadonlySet<string>,
): [MmdbValue, number] {
  const control = bytes.u8(at++);
  let type = control >> 5;
  if (type === 1) {
    const size = (control >> 3) & 3;
    const high = control & 7;
    let pointer: number;
    if (size === 0) pointer = high * 256 + bytes.u8(at);
    else if (size === 1) pointer = high * 65536 + (unsigned(bytes, at, 2) as number) + 2048;
    else if (size === 2) pointer = high * 16777216 + (unsigned(bytes, at, 3) as number) + 526336;
    else pointer = unsigned(bytes, at, 4) as number;
    // The value pointed at, and the position after the pointer (a pointer never points at a pointer).
    return [decode(bytes, pointerBase + pointer, pointerBase, fields)[0], at + size + 1];
  }
  let size: number;
  [type, size, at] = sizeOf(bytes, control, type, at);
  switch (type) {
    case 2: // UTF-8 string
      return [bytes.slice(at, size).toString('utf8'), at + size];
    case 3: // double
      return [bytes.slice(at, 8).readDoubleBE(0), at + 8];
    case 4: // bytes
      return [Buffer.from(bytes.slice(at, size)), at + size];
    case 5: // uint16
    case 6: // uint32
    case 9: // uint64
    case 10: // uint128
      return [unsigned(bytes, at, size), at + size];
    case 7: {
      // map: `size` pairs of a string key and a value
      const map: { [key: string]: MmdbValue } = {};
      for (let i = 0; i < size; i++) {
        const [key, afterKey] = decode(bytes, at, pointerBase);
        if (fields && !fields.has(String(key))) {
          at = skip(bytes, afterKey);
          continue;
        }
        const [value, afterValue] = decode(bytes, afterKey, pointerBase);
        map[String(key)] = value;
        at = afterValue;
      }
      return [map, at];
    }
    case 8: {
      // int32, big-endian, from 0 to 4 bytes
      const value = size === 0 ? 0 : (unsigned(bytes, at, size) as number);
      return [size === 4 ? value | 0 : value, at + size];
    }
    case 11: {
      const array: MmdbValue[] = [];
      for (let i = 0; i < size; i++) {
        const [value, after] = decode(bytes, at, pointerBase);
        array.push(value);
        at = after;
      }
      return [array, at];
    }
    case 14: // boolean: the size is the value
      return [size !== 0, at];
    case 15: // float
      return [bytes.slice(at, 4).readFloatBE(0), at + 4];
    default:
      throw new Error(`unknown MMDB data type ${type} at byte ${at - 1}`);
  }
}

/** The position after the value at `at`, without building it (a pointer's target is not visited). */
function skip(bytes: Bytes, at: number): number {
  const control = bytes.u8(at++);
  let type = control >> 5;
  if (type === 1) return at + ((control >> 3) & 3) + 1;
  let size: number;
  [type, size, at] = sizeOf(bytes, control, type, at);
  switch (type) {
    case 3:
      return at + 8;
    case 15:
      return at + 4;
    case 14:
      return at;
    case 7:
      for (let i = 0; i < size * 2; i++) at = skip(bytes, at);
      return at;
    case 11:
      for (let i = 0; i < size; i++) at = skip(bytes, at);
      return at;
    default:
      return at + size; // strings, bytes and integers: `size` bytes
  }
}

/** The 4 or 16 bytes of an IPv4 or IPv6 address, or null when it is not one. */
export function addressBytes(ip: string): Uint8Array | null {
  if (isIPv4(ip)) return Uint8Array.from(ip.split('.'), Number);
  if (!isIPv6(ip)) return null;
  let text = ip;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const out = new Uint8Array(16);
  const groupsOf = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
        groups.push(a * 256 + b, c * 256 + d);
      } else groups.push(Number.parseInt(group, 16));
    }
    return groups;
  };
  const gap = text.indexOf('::');
  const head = groupsOf(gap >= 0 ? text.slice(0, gap) : text);
  const tail = gap >= 0 ? groupsOf(text.slice(gap + 2)) : [];
  const groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  groups.forEach((group, i) => {
    out[i * 2] = group >> 8;
    out[i * 2 + 1] = group & 255;
  });
  return out;
}

/** An MMDB file read with positioned reads through a cache of `cacheBytes` of its blocks. */
export class MmdbFile implements Bytes {
  readonly metadata: MmdbMetadata;
  private readonly fd: number;
  private readonly size: number;
  private readonly nodeBytes: number;
  private readonly dataStart: number;
  private readonly ipv4Start: number;
  /** Cached blocks: the slot of each block index; a slot's index, buffer and whether it was used lately. */
  private readonly slotOf = new Map<number, number>();
  private readonly slotIndex: number[] = [];
  private readonly slotBlock: Buffer[] = [];
  private readonly slotUsed: Uint8Array;
  private hand = 0;
  private readonly maxBlocks: number;
  private lastIndex = -1;
  private lastBlock: Buffer = Buffer.alloc(0);
  private readonly records = new Map<number, MmdbValue>();
  private readonly fields: ReadonlySet<string> | undefined;

  /**
   * `cacheBytes`: how much of the file's blocks to keep. `fields`: the keys a record's map keeps (the
   * others are skipped: less to build per lookup); all of them when absent.
   */
  constructor(file: string, cacheBytes = 2 * 1024 * 1024, fields?: readonly string[]) {
    this.fields = fields && new Set(fields);
    this.fd = openSync(file, 'r');
    try {
      this.size = fstatSync(this.fd).size;
      this.maxBlocks = Math.max(16, Math.floor(cacheBytes / BLOCK));
      this.slotUsed = new Uint8Array(this.maxBlocks);
      this.metadata = this.readMetadata(file);
    } catch (error) {
      closeSync(this.fd);
      throw error;
    }
    this.nodeBytes = this.metadata.recordSize / 4;
    this.dataStart = this.metadata.nodeCount * this.nodeBytes + DATA_SEPARATOR;
    let node = 0;
    if (this.metadata.ipVersion === 6) {
      for (let i = 0; i < 96 && node < this.metadata.nodeCount; i++) node = this.record(node, 0);
    }
    this.ipv4Start = node;
  }

  private readMetadata(file: string): MmdbMetadata {
    const length = Math.min(this.size, METADATA_MAX);
    const tail = Buffer.alloc(length);
    readSync(this.fd, tail, 0, length, this.size - length);
    const marker = tail.lastIndexOf(METADATA_MARKER);
    if (marker < 0) throw new Error(`${file} is not an MMDB file (no metadata marker)`);
    const start = marker + METADATA_MARKER.length;
    const source: Bytes = { u8: (at) => tail[at] as number, slice: (at, n) => tail.subarray(at, at + n) };
    const [meta] = decode(source, start, start) as [Record<string, MmdbValue>, number];
    const recordSize = Number(meta.record_size);
    const ipVersion = Number(meta.ip_version);
    const nodeCount = Number(meta.node_count);
    if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
      throw new Error(`${file}: unsupported record size ${recordSize}`);
    }
    if ((ipVersion !== 4 && ipVersion !== 6) || !(nodeCount > 0)) throw new Error(`${file}: bad metadata`);
    if ((nodeCount * recordSize) / 4 + DATA_SEPARATOR > this.size) throw new Error(`${file}: cut short`);
    return { nodeCount, recordSize, ipVersion, buildEpoch: new Date(Number(meta.build_epoch) * 1000) };
  }

  /**
   * The cached block `index` of the file (read now when it is not cached). A full cache gives up a block
   * not used since the clock's hand last passed it (CLOCK, a second chance): the blocks every lookup reads,
   * the top of the search tree, stay.
   */
  private block(index: number): Buffer {
    if (index === this.lastIndex) return this.lastBlock;
    let slot = this.slotOf.get(index);
    let block: Buffer;
    if (slot !== undefined) {
      block = this.slotBlock[slot] as Buffer;
    } else {
      if (this.slotBlock.length < this.maxBlocks) {
        slot = this.slotBlock.length;
        block = Buffer.allocUnsafeSlow(BLOCK);
        this.slotBlock.push(block);
        this.slotIndex.push(index);
      } else {
        while (this.slotUsed[this.hand] === 1) {
          this.slotUsed[this.hand] = 0;
          this.hand = (this.hand + 1) % this.maxBlocks;
        }
        slot = this.hand;
        this.hand = (this.hand + 1) % this.maxBlocks;
        this.slotOf.delete(this.slotIndex[slot] as number);
        this.slotIndex[slot] = index;
        block = this.slotBlock[slot] as Buffer; // its buffer is reused
      }
      const read = readSync(this.fd, block, 0, BLOCK, index * BLOCK);
      if (read < BLOCK) block.fill(0, read);
      this.slotOf.set(index, slot);
    }
    this.slotUsed[slot] = 1;
    this.lastIndex = index;
    this.lastBlock = block;
    return block;
  }

  u8(at: number): number {
    if (at >= this.size) throw new RangeError(`byte ${at} is past the end of the file`);
    const index = Math.floor(at / BLOCK);
    return this.block(index)[at - index * BLOCK] as number;
  }

  slice(at: number, length: number): Buffer {
    if (at + length > this.size) throw new RangeError(`bytes ${at}+${length} are past the end of the file`);
    const index = Math.floor(at / BLOCK);
    const within = at - index * BLOCK;
    if (within + length <= BLOCK) return this.block(index).subarray(within, within + length);
    const out = Buffer.allocUnsafe(length);
    for (let done = 0; done < length; ) {
      const i = Math.floor((at + done) / BLOCK);
      const from = at + done - i * BLOCK;
      const n = Math.min(BLOCK - from, length - done);
      this.block(i).copy(out, done, from, from + n);
      done += n;
    }
    return out;
  }

  /** The left (bit 0) or right (bit 1) record of a search tree node. */
  private record(node: number, bit: number): number {
    const at = node * this.nodeBytes;
    const index = Math.floor(at / BLOCK);
    const within = at - index * BLOCK;
    let bytes: Buffer;
    let o = 0;
    if (within + this.nodeBytes <= BLOCK) {
      bytes = this.block(index);
      o = within;
    } else {
      bytes = this.slice(at, this.nodeBytes); // a node across two blocks
    }
    switch (this.metadata.recordSize) {
      case 24:
        return bit ? bytes.readUIntBE(o + 3, 3) : bytes.readUIntBE(o, 3);
      case 28:
        return bit
          ? ((bytes[o + 3] as number) & 0x0f) * 16777216 + bytes.readUIntBE(o + 4, 3)
          : ((bytes[o + 3] as number) >> 4) * 16777216 + bytes.readUIntBE(o, 3);
      default:
        return bit ? bytes.readUInt32BE(o + 4) : bytes.readUInt32BE(o);
    }
  }

  /** The record of the network holding `ip`, or null (no entry, not an address, IPv6 in an IPv4 file). */
  get(ip: string): MmdbValue | null {
    const address = addressBytes(ip);
    if (!address) return null;
    if (address.length === 16 && this.metadata.ipVersion === 4) return null;
    const { nodeCount } = this.metadata;
    let node = address.length === 4 ? this.ipv4Start : 0;
    const bits = address.length * 8;
    for (let depth = 0; depth < bits && node < nodeCount; depth++) {
      node = this.record(node, ((address[depth >> 3] as number) >> (7 - (depth & 7))) & 1);
    }
    if (node <= nodeCount) return null;
    const at = node - nodeCount - DATA_SEPARATOR + this.dataStart;
    let value = this.records.get(at);
    if (value === undefined) {
      if (this.records.size >= RECORD_CACHE) this.records.clear();
      value = decode(this, at, this.dataStart, this.fields)[0];
      this.records.set(at, value);
    }
    return value;
  }
}
