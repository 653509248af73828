// An LMDB file checked before it is opened. lmdb-js maps the file into memory and LMDB trusts what it
// finds: a file cut short ends inside the map, and the first read of a page past its end kills the
// process with SIGBUS (a garbled page can mean SIGSEGV); an empty file is silently taken for a new one.
// So the file is read with plain file reads first, as LMDB's own code reads it (liblmdb's mdb.c in
// lmdb-js 3.5, the format it writes: MDB_DATA_VERSION 2), and refused with a DamagedStateFileError naming
// it unless
//   - both meta pages are meta pages (P_META in the page header's flags) with the magic 0xBEEFC0DE and
//     version 2, naming the same page size, a power of two from 512 to 65536 bytes;
//   - every page the newer meta's trees point at (the higher transaction id, the meta LMDB picks) is in
//     the file: the free-page tree's and the main tree's pages, and those of every named database the main
//     tree lists. Branch pages are read (each must be a branch page of its own number) and every child
//     page number checked against the file's length; leaf pages are checked, not read (but the main tree's,
//     which list the named databases). The meta's mm_last_pg is no bound: LMDB's own comment says the file
//     may end before it when the last pages are free (a log after a retention pass does), so it would
//     refuse whole files. Not checked: the overflow pages of values over a page (not records, which are
//     a few hundred bytes); the read of branch pages is a small part of the file (one page in ~100).
// Layout (little-endian, 64-bit): a page header of 24 bytes (pgno 8, txnid 8, pad 2, flags 2, lower and
// upper 2 + 2), node offsets from byte 24 (each relative to byte 24); a node is lo 2, hi 2, flags 2, key
// size 2, key, data (a branch node's child page is lo | hi << 16 | flags << 32). MDB_meta after the page
// header: magic 4, version 4, address 8, map size 8, two MDB_db (pad 4, flags 2, depth 2, branch, leaf and
// overflow pages, entries and root 8 each: 48 bytes; the first's pad is the page size), mm_last_pg 8,
// mm_txnid 8. A file that does not exist is fine: LMDB creates it. An empty file may be one that another
// thread or process is creating at this moment: LMDB creates the file, then writes its two meta pages in one
// write. Two of the gateway's event loops opening a fresh data directory's files at once saw that (a loop
// refused dashboard.mdb as empty). That write reaches the file a page at a time, so a file may also end
// inside its meta pages for a moment. A file empty or ending inside its meta pages is refused only once it
// has stayed so for CREATION_WAIT_MS.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { DamagedStateFileError } from './damaged-state-file.ts';

const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_META = 0x08;
const F_SUBDATA = 0x02;
const PAGE_HEADER = 24;
const FLAGS = 18;
const LOWER = 20;
const META = PAGE_HEADER;
const DB_SIZE = 48;
const FREE_DB = META + 24;
const MAIN_DB = FREE_DB + DB_SIZE;
const M_TXNID = META + 128;
const META_END = META + 136;
/** md_root of an empty database (P_INVALID). */
const NO_PAGE = 0xffff_ffff_ffff_ffffn;
/** Deeper than any B-tree LMDB can build in a file this size: a loop in garbled pages. */
const MAX_DEPTH = 64;
/** How long a file may take to get its meta pages whole from the thread or process creating it. */
const CREATION_WAIT_MS = 5_000;
const CREATION_POLL_MS = 10;

/** The file's size, -1 when it does not exist. */
function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return -1;
    throw error;
  }
}

/** A file that ends before its two meta pages: empty, or the write creating it not all there yet. */
class Unfinished extends Error {}

interface Tree {
  depth: number;
  root: bigint;
}

interface Meta {
  pageSize: number;
  txnid: bigint;
  free: Tree;
  main: Tree;
}

const treeAt = (page: Buffer, at: number): Tree => ({
  depth: page.readUInt16LE(at + 6),
  root: page.readBigUInt64LE(at + 40),
});

/**
 * Throws DamagedStateFileError when `file` exists and is not a whole LMDB file (see the module's comment);
 * `remedy` says what to do about it. A file empty or ending inside its meta pages is refused once it has
 * stayed so for `creationWaitMs` (another thread or process may be creating it).
 */
export function checkLmdbFile(file: string, remedy: string, creationWaitMs = CREATION_WAIT_MS): void {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + creationWaitMs;
  for (;;) {
    try {
      checkOnce(file, remedy);
      return;
    } catch (error) {
      if (!(error instanceof Unfinished)) throw error;
      if (Date.now() >= deadline) throw new DamagedStateFileError(file, error.message, remedy);
    }
    // A synchronous wait: the check runs before a synchronous open (a constructor), and only here.
    Atomics.wait(sleeper, 0, 0, CREATION_POLL_MS);
  }
}

/** One look at the file: DamagedStateFileError, or Unfinished while it ends before its meta pages. */
function checkOnce(file: string, remedy: string): void {
  const size = sizeOf(file);
  if (size < 0) return;
  const damaged = (problem: string) => new DamagedStateFileError(file, problem, remedy);
  if (size === 0) throw new Unfinished('the file is empty');
  const fd = openSync(file, 'r');
  try {
    const readMeta = (offset: number, which: string): Meta => {
      const page = Buffer.alloc(META_END);
      const got = readSync(fd, page, 0, META_END, offset);
      if (got < META_END) throw new Unfinished(`the file ends inside its ${which} meta page (${size} bytes)`);
      if (!(page.readUInt16LE(FLAGS) & P_META) || page.readUInt32LE(META) !== MAGIC) {
        throw damaged(`its ${which} meta page is not an LMDB meta page`);
      }
      const version = page.readUInt32LE(META + 4) & 0xffff;
      if (version !== DATA_VERSION) throw damaged(`its ${which} meta page has format version ${version}`);
      const pageSize = page.readUInt32LE(FREE_DB);
      if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
        throw damaged(`its ${which} meta page names a page size of ${pageSize}`);
      }
      const txnid = page.readBigUInt64LE(M_TXNID);
      return { pageSize, txnid, free: treeAt(page, FREE_DB), main: treeAt(page, MAIN_DB) };
    };
    const first = readMeta(0, 'first');
    const second = readMeta(first.pageSize, 'second');
    if (second.pageSize !== first.pageSize) {
      throw damaged(`its meta pages name two page sizes (${first.pageSize} and ${second.pageSize})`);
    }
    const meta = second.txnid > first.txnid ? second : first;
    const pageSize = meta.pageSize;
    const pages = BigInt(Math.floor(size / pageSize));

    const inFile = (pgno: bigint, what: string) => {
      if (pgno >= pages) {
        throw damaged(`${what} is page ${pgno}, and the file ends at page ${pages}: it was cut short`);
      }
    };
    const readPage = (pgno: bigint, flag: number, what: string): Buffer => {
      inFile(pgno, what);
      const page = Buffer.alloc(pageSize);
      readSync(fd, page, 0, pageSize, Number(pgno) * pageSize);
      if (page.readBigUInt64LE(0) !== pgno || !(page.readUInt16LE(FLAGS) & flag)) {
        throw damaged(`${what}, page ${pgno}, is not the page the tree points at`);
      }
      return page;
    };
    /** Each node of a branch or leaf page: its flags, its key's and data's offsets, and its lo/hi word. */
    const nodes = function* (page: Buffer) {
      const count = page.readUInt16LE(LOWER) >> 1;
      if (PAGE_HEADER + 2 * count > pageSize) throw damaged('a page of its trees holds more nodes than fit');
      for (let i = 0; i < count; i++) {
        const at = page.readUInt16LE(PAGE_HEADER + 2 * i) + PAGE_HEADER;
        if (at + 8 > pageSize) throw damaged('a node of its trees lies past the end of its page');
        const flags = page.readUInt16LE(at + 4);
        const keySize = page.readUInt16LE(at + 6);
        const lohi = page.readUInt16LE(at) + page.readUInt16LE(at + 2) * 0x10000;
        yield { flags, lohi, key: at + 8, data: at + 8 + keySize };
      }
    };
    /** Checks the pages of a tree; `onLeaf` reads its leaf pages (only the main tree's). */
    const checkTree = (name: string, tree: Tree, onLeaf?: (page: Buffer) => void) => {
      if (tree.root === NO_PAGE) return;
      if (tree.depth < 1 || tree.depth > MAX_DEPTH)
        throw damaged(`the tree of ${name} has a depth of ${tree.depth}`);
      const visit = (pgno: bigint, depth: number) => {
        if (depth === 1) {
          if (onLeaf) onLeaf(readPage(pgno, P_LEAF, `a leaf page of ${name}`));
          else inFile(pgno, `a leaf page of ${name}`);
          return;
        }
        const page = readPage(pgno, P_BRANCH, `a branch page of ${name}`);
        for (const node of nodes(page)) visit(BigInt(node.lohi) + (BigInt(node.flags) << 32n), depth - 1);
      };
      visit(tree.root, tree.depth);
    };

    checkTree('the free pages', meta.free);
    const named: Array<[string, Tree]> = [];
    checkTree('the main database', meta.main, (leaf) => {
      for (const node of nodes(leaf)) {
        if (!(node.flags & F_SUBDATA)) continue;
        if (node.data + DB_SIZE > pageSize) throw damaged('a database record lies past the end of its page');
        const name = leaf.toString('utf8', node.key, node.data).replace(/\0+$/, '');
        named.push([`the database ${JSON.stringify(name)}`, treeAt(leaf, node.data - 0)]);
      }
    });
    for (const [name, tree] of named) checkTree(name, tree);
  } finally {
    closeSync(fd);
  }
}
