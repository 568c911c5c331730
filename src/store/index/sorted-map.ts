/**
 * @module SortedMap: an in-memory map from key to bytes, kept in compareKeys order (UTF-8
 * byte order). It backs the index overlay: tens of thousands of keys, thousands of inserts
 * per second, LIST reading it concurrently, and a frozen copy flushed to a run.
 *
 * Structure: a B+tree of wide nodes (NODE_MAX keys), values only in leaves, no sibling
 * links. Iteration copies one leaf's tail at a time and then seeks past the last key it
 * returned, so an iterator is never invalidated by writes made between its steps: it
 * yields, in order and exactly once, every key present for the whole iteration; a key
 * inserted or deleted meanwhile may or may not appear. get/set/delete are O(log n); a page
 * of N keys from a seek costs O(log n + N).
 */
import { compareKeys } from './compare.js';
import type { EntryBatch, SeekKey, SortedSource } from './merge.js';

/** Keys per node before it splits: wide enough that 64^3 = 262,144 keys take three levels. */
const NODE_MAX = 64;
/** After a delete, a leaf holding fewer keys than this merges into its left neighbour. */
const LEAF_MIN = NODE_MAX / 4;
/**
 * Approximate heap bytes per entry beyond its key characters and value bytes: the key
 * string header, the Uint8Array and its ArrayBuffer, and the node array slots. Measured on
 * Node 20 x64 at ~235 bytes (100,000 entries, each value its own Uint8Array).
 */
export const ENTRY_OVERHEAD_BYTES = 240;

interface Leaf {
  readonly leaf: true;
  keys: string[];
  values: Uint8Array[];
}
interface Branch {
  readonly leaf: false;
  /** keys[i] is a lower bound of every key under children[i + 1]; one fewer than children. */
  keys: string[];
  children: Node[];
}
type Node = Leaf | Branch;
interface Split {
  separator: string;
  right: Node;
}

/** First index whose key is >= key (inclusive) or > key (exclusive); keys.length if none. */
function bound(keys: readonly string[], key: string, inclusive: boolean, lo = 0): number {
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(keys[mid]!, key);
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const entryBytes = (key: string, value: Uint8Array): number =>
  key.length + value.byteLength + ENTRY_OVERHEAD_BYTES;

/** A leaf tail handed to a reader: copies of the arrays, so later writes cannot change it. */
class LeafBatch implements EntryBatch {
  readonly start = 0;
  constructor(
    readonly keys: readonly string[],
    readonly values: readonly Uint8Array[]
  ) {}
  valueAt(index: number): Uint8Array {
    return this.values[index]!;
  }
}

export class SortedMap implements SortedSource {
  readonly name: string;
  #root: Node = { leaf: true, keys: [], values: [] };
  #size = 0;
  #bytes = 0;

  /** `name` labels this source in merge results and errors. */
  constructor(name = 'overlay') {
    this.name = name;
  }

  /** Number of keys. */
  get size(): number {
    return this.#size;
  }

  /** Approximate heap bytes held: key characters + value bytes + ENTRY_OVERHEAD_BYTES each. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The value stored under `key` (the caller's own array, not a copy), or undefined. */
  get(key: string): Uint8Array | undefined {
    let node = this.#root;
    while (!node.leaf) node = node.children[bound(node.keys, key, false)]!;
    const i = bound(node.keys, key, true);
    return node.keys[i] === key ? node.values[i] : undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Stores `value` under `key`, replacing any previous value. Keeps a reference to `value`. */
  set(key: string, value: Uint8Array): this {
    const split = this.#insert(this.#root, key, value);
    if (split) {
      this.#root = { leaf: false, keys: [split.separator], children: [this.#root, split.right] };
    }
    return this;
  }

  #insert(node: Node, key: string, value: Uint8Array): Split | undefined {
    if (node.leaf) {
      const i = bound(node.keys, key, true);
      if (node.keys[i] === key) {
        this.#bytes += value.byteLength - node.values[i]!.byteLength;
        node.values[i] = value;
        return undefined;
      }
      node.keys.splice(i, 0, key);
      node.values.splice(i, 0, value);
      this.#size++;
      this.#bytes += entryBytes(key, value);
      if (node.keys.length <= NODE_MAX) return undefined;
      const half = node.keys.length >>> 1;
      const right: Leaf = {
        leaf: true,
        keys: node.keys.splice(half),
        values: node.values.splice(half),
      };
      return { separator: right.keys[0]!, right };
    }
    const c = bound(node.keys, key, false);
    const split = this.#insert(node.children[c]!, key, value);
    if (!split) return undefined;
    node.keys.splice(c, 0, split.separator);
    node.children.splice(c + 1, 0, split.right);
    if (node.children.length <= NODE_MAX) return undefined;
    const half = node.children.length >>> 1;
    const right: Branch = {
      leaf: false,
      keys: node.keys.splice(half),
      children: node.children.splice(half),
    };
    return { separator: node.keys.pop()!, right };
  }

  /**
   * Removes `key`; returns whether it was present. Empty nodes are removed and a small leaf
   * merges into its left neighbour, but nodes are not otherwise rebalanced: the height stays
   * that of the largest size the map has had (at most log64 of it).
   */
  delete(key: string): boolean {
    const path: [Branch, number][] = [];
    let node = this.#root;
    while (!node.leaf) {
      const c = bound(node.keys, key, false);
      path.push([node, c]);
      node = node.children[c]!;
    }
    const i = bound(node.keys, key, true);
    if (node.keys[i] !== key) return false;
    this.#bytes -= entryBytes(key, node.values[i]!);
    this.#size--;
    node.keys.splice(i, 1);
    node.values.splice(i, 1);
    const parent = path[path.length - 1];
    if (node.keys.length === 0) this.#prune(path);
    else if (parent && parent[1] > 0 && node.keys.length < LEAF_MIN) {
      const left = parent[0].children[parent[1] - 1] as Leaf;
      if (left.keys.length + node.keys.length <= NODE_MAX) {
        left.keys.push(...node.keys);
        left.values.push(...node.values);
        this.#prune(path);
      }
    }
    while (!this.#root.leaf && this.#root.children.length === 1)
      this.#root = this.#root.children[0]!;
    return true;
  }

  /** Unlinks the child at the end of `path`, and every ancestor that becomes childless. */
  #prune(path: [Branch, number][]): void {
    for (let d = path.length - 1; d >= 0; d--) {
      const [branch, c] = path[d]!;
      branch.children.splice(c, 1);
      branch.keys.splice(c > 0 ? c - 1 : 0, 1);
      if (branch.children.length > 0) return;
    }
    this.#root = { leaf: true, keys: [], values: [] };
  }

  /**
   * The entries at or after `from` (all when absent) up to the end of one leaf: a non-empty
   * batch, or undefined past the last key. O(log n + batch).
   */
  #collect(from: SeekKey | undefined): LeafBatch | undefined {
    const path: [Branch, number][] = [];
    let node = this.#root;
    while (!node.leaf) {
      const c = from ? bound(node.keys, from.key, false) : 0;
      path.push([node, c]);
      node = node.children[c]!;
    }
    let i = from ? bound(node.keys, from.key, from.inclusive) : 0;
    while (i >= node.keys.length) {
      // Past this leaf: the next leaf is the leftmost under the nearest right uncle.
      let d = path.length - 1;
      while (d >= 0 && path[d]![1] + 1 >= path[d]![0].children.length) d--;
      if (d < 0) return undefined;
      node = path[d]![0].children[++path[d]![1]]!;
      path.length = d + 1;
      while (!node.leaf) {
        path.push([node, 0]);
        node = node.children[0]!;
      }
      i = 0;
    }
    return new LeafBatch(node.keys.slice(i), node.values.slice(i));
  }

  /**
   * Entries in key order from `from` (first key >= it, or > it when not inclusive; all when
   * absent). Safe to interleave with writes (see the module note). Values are not copied.
   */
  *entries(from?: SeekKey): IterableIterator<[string, Uint8Array]> {
    let at = from;
    for (let batch = this.#collect(at); batch; batch = this.#collect(at)) {
      for (let i = 0; i < batch.keys.length; i++) yield [batch.keys[i]!, batch.values[i]!];
      at = { key: batch.keys[batch.keys.length - 1]!, inclusive: false };
    }
  }

  [Symbol.iterator](): IterableIterator<[string, Uint8Array]> {
    return this.entries();
  }

  /** SortedSource.peek: the first batch scan(from) would yield (null: none); never reads. */
  peek(from: SeekKey, _seek?: boolean): EntryBatch | null {
    return this.#collect(from) ?? null;
  }

  /** SortedSource: the entries from `from`, one leaf tail per batch. */
  async *scan(from: SeekKey): AsyncGenerator<EntryBatch, void, undefined> {
    let at = from;
    for (let batch = this.#collect(at); batch; batch = this.#collect(at)) {
      yield batch;
      at = { key: batch.keys[batch.keys.length - 1]!, inclusive: false };
    }
  }
}
