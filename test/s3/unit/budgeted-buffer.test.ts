/**
 * The budgeted buffer of XML bodies: nothing is reserved until bytes arrive (never the
 * announced length), capacity doubles from INITIAL_BYTES and is reserved before it is
 * allocated, the old capacity is released only after the copy, a refused reservation or a
 * body past `max` leaves the buffer as it was, and release is idempotent — all against the
 * real pending budget.
 */
import { describe, expect, it } from 'vitest';
import { BudgetedBuffer, INITIAL_BYTES } from '../../../src/s3/budgeted-buffer.js';
import { PendingBudget } from '../../../src/store/budget.js';
import { S3Error } from '../../../src/s3/errors.js';
import { isStoreError } from '../../../src/store/errors.js';
import { randomBytes } from '../../support/random.js';

const tooBig = () => new S3Error('MaxMessageLengthExceeded');

describe('BudgetedBuffer', () => {
  it('reserves nothing up front and grows by doubling as bytes arrive, charging each growth', () => {
    const budget = new PendingBudget(64 * 1024 * 1024);
    const buf = new BudgetedBuffer((n) => budget.reserve(n), 8 * 1024 * 1024, tooBig);
    expect(budget.used).toBe(0);
    buf.append(new Uint8Array(10));
    expect(budget.used).toBe(INITIAL_BYTES);
    buf.append(new Uint8Array(INITIAL_BYTES)); // needs INITIAL + 10: doubles
    expect(buf.reserved).toBe(2 * INITIAL_BYTES);
    expect(budget.used).toBe(2 * INITIAL_BYTES);
    // The peak covered old and new capacity together while both existed.
    expect(budget.peak).toBe(3 * INITIAL_BYTES);
    buf.release();
    buf.release();
    expect(budget.used).toBe(0);
  });

  it('holds the bytes exactly, in order, however they are fragmented', () => {
    const data = Buffer.from(randomBytes(300_000, 9));
    for (const piece of [1, 7, 4096, 100_000]) {
      const budget = new PendingBudget(1 << 30);
      const buf = new BudgetedBuffer((n) => budget.reserve(n), data.length, tooBig);
      for (let i = 0; i < data.length; i += piece) buf.append(data.subarray(i, i + piece));
      expect(Buffer.from(buf.bytes()).equals(data)).toBe(true);
      // Capped at max: never more than the body may be.
      expect(buf.reserved).toBeLessThanOrEqual(data.length);
      buf.release();
    }
  });

  it('past max throws the limit error and keeps what it had', () => {
    const budget = new PendingBudget(1 << 20);
    const buf = new BudgetedBuffer((n) => budget.reserve(n), 100, tooBig);
    buf.append(new Uint8Array(60));
    expect(() => buf.append(new Uint8Array(41))).toThrow(S3Error);
    expect(buf.length).toBe(60);
    expect(buf.reserved).toBe(100); // min(max, INITIAL)
    buf.append(new Uint8Array(40));
    expect(buf.length).toBe(100);
    buf.release();
    expect(budget.used).toBe(0);
  });

  it('a growth the budget refuses throws SlowDown and leaves the buffer and budget as they were', () => {
    const budget = new PendingBudget(3 * INITIAL_BYTES);
    const other = budget.reserve(INITIAL_BYTES);
    const buf = new BudgetedBuffer((n) => budget.reserve(n), 1 << 20, tooBig);
    buf.append(new Uint8Array(INITIAL_BYTES));
    expect(budget.used).toBe(2 * INITIAL_BYTES);
    let err: unknown;
    try {
      buf.append(new Uint8Array(1)); // would need 2 × INITIAL more while the old is held
    } catch (e) {
      err = e;
    }
    expect(isStoreError(err, 'SlowDown')).toBe(true);
    expect(buf.length).toBe(INITIAL_BYTES);
    expect(budget.used).toBe(2 * INITIAL_BYTES);
    other();
    buf.append(new Uint8Array(1));
    expect(buf.length).toBe(INITIAL_BYTES + 1);
    buf.release();
    expect(budget.used).toBe(0);
  });

  it('cannot be used after release, and rejects a bad max', () => {
    const buf = new BudgetedBuffer(() => () => undefined, 10, tooBig);
    buf.release();
    expect(() => buf.append(new Uint8Array(1))).toThrow(/after release/);
    expect(buf.reserved).toBe(0);
    expect(() => new BudgetedBuffer(() => () => undefined, -1, tooBig)).toThrow(RangeError);
  });
});
