// CityHash128 as ClickHouse computes it: Google's CityHash v1.0.2, the version ClickHouse froze for the
// checksum of each block of its compressed format (`compress=1`/`decompress=1` over HTTP). Later CityHash
// versions give other values, and no maintained npm package implements this one, so it is written here
// (BigInt arithmetic modulo 2^64) and checked against the reference binding clickhouse-cityhash.

const MASK = (1n << 64n) - 1n;
const K0 = 0xc3a5c85c97cb3127n;
const K1 = 0xb492b66fbe98f273n;
const K2 = 0x9ae16a3b2f90404fn;
const K3 = 0xc949d7c7509e6557n;
const KMUL = 0x9ddfea08eb382d69n;

type Pair = [bigint, bigint];

const add = (a: bigint, b: bigint) => (a + b) & MASK;
const mul = (a: bigint, b: bigint) => (a * b) & MASK;
const sub = (a: bigint, b: bigint) => (a - b) & MASK;
const rotate = (v: bigint, shift: number) =>
  shift === 0 ? v : ((v >> BigInt(shift)) | (v << BigInt(64 - shift))) & MASK;
const shiftMix = (v: bigint) => v ^ (v >> 47n);

function hashLen16(u: bigint, v: bigint): bigint {
  let a = mul(u ^ v, KMUL);
  a ^= a >> 47n;
  let b = mul(v ^ a, KMUL);
  b ^= b >> 47n;
  return mul(b, KMUL);
}

class Reader {
  readonly data: Uint8Array;
  readonly view: DataView;
  constructor(data: Uint8Array) {
    this.data = data;
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  u64(at: number): bigint {
    return this.view.getBigUint64(at, true);
  }
  u32(at: number): bigint {
    return BigInt(this.view.getUint32(at, true));
  }
}

function hashLen0to16(r: Reader, s: number, len: number): bigint {
  if (len > 8) {
    const a = r.u64(s);
    const b = r.u64(s + len - 8);
    return hashLen16(a, rotate(add(b, BigInt(len)), len)) ^ b;
  }
  if (len >= 4) {
    const a = r.u32(s);
    return hashLen16(add(BigInt(len), a << 3n), r.u32(s + len - 4));
  }
  if (len > 0) {
    const a = BigInt(r.data[s] as number);
    const b = BigInt(r.data[s + (len >> 1)] as number);
    const c = BigInt(r.data[s + len - 1] as number);
    const y = a + (b << 8n);
    const z = BigInt(len) + (c << 2n);
    return mul(shiftMix(mul(y, K2) ^ mul(z, K3)), K2);
  }
  return K2;
}

function weakHashLen32WithSeeds(r: Reader, s: number, a0: bigint, b0: bigint): Pair {
  const w = r.u64(s);
  const x = r.u64(s + 8);
  const y = r.u64(s + 16);
  const z = r.u64(s + 24);
  let a = add(a0, w);
  let b = rotate(add(add(b0, a), z), 21);
  const c = a;
  a = add(add(a, x), y);
  b = add(b, rotate(a, 44));
  return [add(a, z), add(b, c)];
}

function cityMurmur(r: Reader, s: number, len: number, seed: Pair): Pair {
  let [a, b] = seed;
  let c: bigint;
  let d: bigint;
  let l = len - 16;
  if (l <= 0) {
    a = mul(shiftMix(mul(a, K1)), K1);
    c = add(mul(b, K1), hashLen0to16(r, s, len));
    d = shiftMix(add(a, len >= 8 ? r.u64(s) : c));
  } else {
    c = hashLen16(add(r.u64(s + len - 8), K1), a);
    d = hashLen16(add(b, BigInt(len)), add(c, r.u64(s + len - 16)));
    a = add(a, d);
    do {
      a ^= mul(shiftMix(mul(r.u64(s), K1)), K1);
      a = mul(a, K1);
      b ^= a;
      c ^= mul(shiftMix(mul(r.u64(s + 8), K1)), K1);
      c = mul(c, K1);
      d ^= c;
      s += 16;
      l -= 16;
    } while (l > 0);
  }
  a = hashLen16(a, c);
  b = hashLen16(d, b);
  return [a ^ b, hashLen16(b, a)];
}

function cityHash128WithSeed(r: Reader, start: number, length: number, seed: Pair): Pair {
  if (length < 128) return cityMurmur(r, start, length, seed);
  let s = start;
  let len = length;
  let [x, y] = seed;
  let z = mul(BigInt(len), K1);
  const v: Pair = [0n, 0n];
  const w: Pair = [0n, 0n];
  v[0] = add(mul(rotate(y ^ K1, 49), K1), r.u64(s));
  v[1] = add(mul(rotate(v[0], 42), K1), r.u64(s + 8));
  w[0] = add(mul(rotate(add(y, z), 35), K1), x);
  w[1] = mul(rotate(add(x, r.u64(s + 88)), 53), K1);
  let next: Pair;
  do {
    for (let half = 0; half < 2; half++) {
      x = mul(rotate(add(add(add(x, y), v[0]), r.u64(s + 16)), 37), K1);
      y = mul(rotate(add(add(y, v[1]), r.u64(s + 48)), 42), K1);
      x ^= w[1];
      y ^= v[0];
      z = rotate(z ^ w[0], 33);
      next = weakHashLen32WithSeeds(r, s, mul(v[1], K1), add(x, w[0]));
      v[0] = next[0];
      v[1] = next[1];
      next = weakHashLen32WithSeeds(r, s + 32, add(z, w[1]), y);
      w[0] = next[0];
      w[1] = next[1];
      [z, x] = [x, z];
      s += 64;
    }
    len -= 128;
  } while (len >= 128);
  y = add(y, add(mul(rotate(w[0], 37), K0), z));
  x = add(x, mul(rotate(add(v[0], z), 49), K0));
  for (let tailDone = 0; tailDone < len; ) {
    tailDone += 32;
    y = add(mul(rotate(sub(y, x), 42), K0), v[1]);
    w[0] = add(w[0], r.u64(s + len - tailDone + 16));
    x = add(mul(rotate(x, 49), K0), w[0]);
    w[0] = add(w[0], v[0]);
    next = weakHashLen32WithSeeds(r, s + len - tailDone, v[0], v[1]);
    v[0] = next[0];
    v[1] = next[1];
  }
  x = hashLen16(x, v[0]);
  y = hashLen16(y, w[0]);
  return [add(hashLen16(add(x, v[1]), w[1]), y), hashLen16(add(x, w[1]), add(y, v[1]))];
}

/** CityHash128 v1.0.2 of `data` as [low 64 bits, high 64 bits]. */
export function cityHash128(data: Uint8Array): Pair {
  const r = new Reader(data);
  const len = data.length;
  if (len >= 16) return cityHash128WithSeed(r, 16, len - 16, [r.u64(0) ^ K3, r.u64(8)]);
  if (len >= 8) {
    return cityHash128WithSeed(r, 0, 0, [r.u64(0) ^ mul(BigInt(len), K0), r.u64(len - 8) ^ K1]);
  }
  return cityHash128WithSeed(r, 0, len, [K0, K1]);
}

/** The 16-byte checksum as ClickHouse writes it before a compressed block: low half, then high half. */
export function cityHash128Checksum(data: Uint8Array): Buffer {
  const [low, high] = cityHash128(data);
  const out = Buffer.alloc(16);
  out.writeBigUInt64LE(low, 0);
  out.writeBigUInt64LE(high, 8);
  return out;
}
