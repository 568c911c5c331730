// pack module: encodes and checks the framing of Strata packs (format.ts has the layout).
//
// Memory (fixed):
//
//   __heap_base ─┬─ HEADER  64 bytes      pack header / entry header / trailer scratch
//                ├─ ID      16 bytes      pack id in, for writeHeader
//                ├─ FOOTER  MAX_ENTRIES * 16 bytes   the footer table
//                └─ ARENA   the rest      body slices for crc32c
//
// The TS boundary (src/wasm/pack.ts) copies bytes in, calls one function, copies out.
import { crc32cUpdate } from '../checksum/crc32c';
import {
  VERSION, PACK_HEADER_SIZE, ENTRY_HEADER_SIZE, FOOTER_ENTRY_SIZE, TRAILER_SIZE, MAX_ENTRIES,
  PACK_MAGIC, END_MAGIC, ENTRY_MAGIC,
  OK, E_MAGIC, E_VERSION, E_CHECKSUM, E_BOUNDS, E_MISMATCH, E_TRUNCATED,
} from './format';

const HEADER: usize = (__heap_base + 63) & ~63;
const ID: usize = HEADER + 64;
const FOOTER: usize = (ID + 16 + 63) & ~63;
const ARENA: usize = FOOTER + <usize>MAX_ENTRIES * FOOTER_ENTRY_SIZE;

export function headerPtr(): usize { return HEADER; }
export function idPtr(): usize { return ID; }
export function footerPtr(): usize { return FOOTER; }
export function arenaPtr(): usize { return ARENA; }
export function arenaSize(): usize { return (<usize>memory.size() << 16) - ARENA; }
export function maxEntries(): u32 { return MAX_ENTRIES; }

/** crc32c continued over `len` bytes at ARENA (for bodies streamed through in slices). */
export function crcArena(crc: u32, len: usize): u32 {
  return crc32cUpdate(crc, ARENA, len);
}

/** Writes the 32-byte pack header for `count` entries and the 12-byte id at ID into HEADER. */
export function writePackHeader(count: u32): u32 {
  store<u64>(HEADER, PACK_MAGIC);
  store<u16>(HEADER, VERSION, 8);
  store<u16>(HEADER, 0, 10);
  store<u32>(HEADER, count, 12);
  memory.copy(HEADER + 16, ID, 12);
  const crc = crc32cUpdate(0, HEADER, 28);
  store<u32>(HEADER, crc, 28);
  return crc;
}

/**
 * Checks the pack header in HEADER: magic, version, CRC, count <= MAX_ENTRIES. On success
 * copies the 12-byte id to ID. Returns a status code.
 */
export function checkPackHeader(): i32 {
  if (load<u64>(HEADER) != PACK_MAGIC) return E_MAGIC;
  if (crc32cUpdate(0, HEADER, 28) != load<u32>(HEADER, 28)) return E_CHECKSUM;
  if (load<u16>(HEADER, 8) != VERSION) return E_VERSION;
  if (load<u32>(HEADER, 12) > MAX_ENTRIES) return E_BOUNDS;
  memory.copy(ID, HEADER + 16, 12);
  return OK;
}

/** Writes a 24-byte entry header into HEADER. */
export function writeEntry(tag: u32, index: u32, length: u32, bodyCrc: u32): void {
  store<u32>(HEADER, ENTRY_MAGIC);
  store<u32>(HEADER, tag, 4);
  store<u32>(HEADER, index, 8);
  store<u32>(HEADER, length, 12);
  store<u32>(HEADER, bodyCrc, 16);
  store<u32>(HEADER, crc32cUpdate(0, HEADER, 20), 20);
}

/** Writes footer row `index`: the entry's offset, body length and body CRC. */
export function setFooterRow(index: u32, at: u64, length: u32, bodyCrc: u32): void {
  const row = FOOTER + <usize>index * FOOTER_ENTRY_SIZE;
  store<u64>(row, at);
  store<u32>(row, length, 8);
  store<u32>(row, bodyCrc, 12);
}

/**
 * Checks the entry header in HEADER: magic, CRC, pack tag, and (when `index` is not
 * 0xffffffff) the index. The body length and CRC stay at HEADER+12 / HEADER+16 for the
 * caller. Returns a status code.
 */
export function checkEntryHeader(tag: u32, index: u32): i32 {
  if (load<u32>(HEADER) != ENTRY_MAGIC) return E_MAGIC;
  if (crc32cUpdate(0, HEADER, 20) != load<u32>(HEADER, 20)) return E_CHECKSUM;
  if (load<u32>(HEADER, 4) != tag) return E_MISMATCH;
  if (index != 0xffffffff && load<u32>(HEADER, 8) != index) return E_MISMATCH;
  return OK;
}

/** Writes the 32-byte trailer into HEADER for the `count` footer rows set at FOOTER. */
export function writeTrailer(footerAt: u64, count: u32, headerCrc: u32): void {
  store<u64>(HEADER, footerAt);
  store<u32>(HEADER, count, 8);
  store<u32>(HEADER, crc32cUpdate(0, FOOTER, <usize>count * FOOTER_ENTRY_SIZE), 12);
  store<u32>(HEADER, headerCrc, 16);
  store<u32>(HEADER, crc32cUpdate(0, HEADER, 20), 20);
  store<u64>(HEADER, END_MAGIC, 24);
}

/**
 * Checks the trailer in HEADER against the blob size: magic, CRC, and that the footer it
 * points at fits exactly between the pack header and the trailer. Returns a status code.
 */
export function checkTrailer(packSize: u64): i32 {
  if (load<u64>(HEADER, 24) != END_MAGIC) return E_MAGIC;
  if (crc32cUpdate(0, HEADER, 20) != load<u32>(HEADER, 20)) return E_CHECKSUM;
  const footerAt = load<u64>(HEADER);
  const count = load<u32>(HEADER, 8);
  if (count > MAX_ENTRIES) return E_BOUNDS;
  const footerEnd = footerAt + <u64>count * FOOTER_ENTRY_SIZE;
  if (footerAt < PACK_HEADER_SIZE || footerEnd + TRAILER_SIZE != packSize) return E_BOUNDS;
  return OK;
}

/**
 * Checks the footer table already copied to FOOTER (count rows, as the trailer said):
 * its CRC (expected at HEADER+12, i.e. call right after checkTrailer), and that the rows
 * tile [PACK_HEADER_SIZE, footerAt) exactly with entries in order. Returns a status code.
 */
export function checkFooter(footerAt: u64, count: u32): i32 {
  if (crc32cUpdate(0, FOOTER, <usize>count * FOOTER_ENTRY_SIZE) != load<u32>(HEADER, 12)) return E_CHECKSUM;
  let expect: u64 = PACK_HEADER_SIZE;
  for (let i: u32 = 0; i < count; i++) {
    const row = FOOTER + <usize>i * FOOTER_ENTRY_SIZE;
    if (load<u64>(row) != expect) return E_BOUNDS;
    expect += <u64>ENTRY_HEADER_SIZE + <u64>load<u32>(row, 8);
    if (expect > footerAt) return E_TRUNCATED;
  }
  return expect == footerAt ? OK : E_BOUNDS;
}
