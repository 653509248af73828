// Secrets the dashboard hands out (session tokens, sign-in link tokens, share link tokens and grants) and
// the passwords it checks. Random secrets are 256 bits from crypto.randomBytes and stored only as their
// SHA-256 hash (a slow hash buys nothing for random secrets); passwords are hashed with scrypt (Node's
// crypto: no native add-on), salted, and compared in constant time.
import { hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** A new secret: the prefix and 43 base64url characters (256 bits). */
export const newSecret = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;
export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

// scrypt's cost: N = 2^15, r = 8, p = 1 (OWASP's minimum is 2^17 with p = 1 for 32 MB; this is 32 MB
// with r = 8), about 50 ms here: slow enough to make guessing costly, fast enough for a sign-in.
const N = 32_768;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$<salt>$<hash>` (base64url): the parameters travel with the hash, so they can grow later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, expected] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const key = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  const want = Buffer.from(expected, 'base64url');
  return key.length === want.length && timingSafeEqual(key, want);
}

/** A hash to check against when there is no user, so that an unknown email costs the same time. */
let decoy: Promise<string> | null = null;
export const decoyPasswordHash = (): Promise<string> => {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
};
