/**
 * @module Merging runs of small body chunks before they reach the socket.
 *
 * Strata hands the provider bodies as many small chunks: a commit blob of 1,024 tiny objects
 * is ~2,000 pieces (each entry's 24-byte header, then its body), a run blob is one chunk per
 * index block. Sent as they are, each becomes its own socket write and, with TCP_NODELAY,
 * often its own segment; the server then wakes up once per piece. Measured on Ceph RGW
 * on this 2-core machine (50,000 objects as in test/ceph/scale.test.ts, load average ~15):
 * a 190 KiB commit blob sent as 2,050 chunks took 248 ms on average, merged 90 ms, and the
 * write lane went from 326 to 164 us per object (61 us at load 7, where Strata's own CPU
 * becomes the limit).
 */

/**
 * Merged buffers are at most this long, bytes: large enough that a commit blob of small
 * bodies goes out in a handful of writes, small enough that the copy made for one request
 * stays far below the pending budget (64 MiB) even with every pool connection sending.
 */
export const COALESCE_BYTES = 256 * 1024;

/**
 * The bytes of `chunks`, in order, where every run of consecutive chunks shorter than
 * `limit` is merged into buffers of at most `limit` bytes; chunks of `limit` bytes or more
 * are passed through uncopied, and so is a merged run of one chunk. Empty chunks are
 * dropped. Lazy: a buffer is made only when the consumer asks for it, so sending a large
 * body of small chunks holds one merged buffer at a time, not a copy of the body. Mutates
 * nothing; what it yields may share memory with `chunks`.
 * @throws RangeError (on the first step) when `limit` is not a positive safe integer.
 */
export function* coalesceChunks(
  chunks: readonly Uint8Array[],
  limit: number = COALESCE_BYTES
): Generator<Uint8Array, void, undefined> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`invalid limit ${limit}`);
  let run: Uint8Array[] = [];
  let runBytes = 0;
  function* flush(): Generator<Uint8Array, void, undefined> {
    const held = run;
    const bytes = runBytes;
    run = [];
    runBytes = 0;
    if (held.length === 1) yield held[0]!;
    else if (held.length > 1) yield Buffer.concat(held, bytes);
  }
  for (const c of chunks) {
    if (c.byteLength === 0) continue;
    if (c.byteLength >= limit) {
      yield* flush();
      yield c;
      continue;
    }
    if (runBytes + c.byteLength > limit) yield* flush();
    run.push(c);
    runBytes += c.byteLength;
  }
  yield* flush();
}
