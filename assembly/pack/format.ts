// Strata pack format, version 1: many small bodies in one immutable blob.
//
// All integers are little-endian. CRCs are CRC32C (Castagnoli), zlib-style values.
//
//   offset 0      ┌─────────────────────────────────────────────────────────────┐
//                 │ pack header, 32 bytes                                        │
//                 │   0  magic "STRAPACK"                      8 bytes           │
//                 │   8  version u16 = 1 | flags u16 = 0                         │
//                 │  12  entry count u32                                         │
//                 │  16  pack id, 12 random bytes (its first 4 = the pack tag)   │
//                 │  28  crc32c of bytes 0..27                                   │
//   entry offset  ├─────────────────────────────────────────────────────────────┤
//                 │ entry header, 24 bytes                                       │
//                 │   0  magic "SPE1" u32 | 4 pack tag u32 | 8 entry index u32   │
//                 │  12  body length u32  | 16 crc32c(body) u32                  │
//                 │  20  crc32c of header bytes 0..19                            │
//                 │ body, `length` bytes                                         │
//                 ├─────────────────────────────────────────────────────────────┤
//                 │ ... entries 1 .. count-1, contiguous, in index order ...     │
//   footer offset ├─────────────────────────────────────────────────────────────┤
//                 │ footer table: count x 16 bytes                               │
//                 │   0  entry offset u64 | 8 body length u32 | 12 crc32c(body)  │
//                 ├─────────────────────────────────────────────────────────────┤
//                 │ trailer, 32 bytes (the last 32 bytes of the blob)            │
//                 │   0  footer offset u64 | 8 entry count u32                   │
//                 │  12  crc32c(footer table) | 16 header crc (copy)             │
//                 │  20  crc32c of trailer bytes 0..19                           │
//                 │  24  magic "STRAPEND"                                        │
//                 └─────────────────────────────────────────────────────────────┘
//
// A cold read of one entry is a single ranged read of [entry offset, +24 + length):
// the header carries the pack tag and index (a misdirected read is detected), the length
// (a truncated read is detected) and the body CRC. Whole-pack verification checks every
// CRC, and that the footer agrees with the entry headers and tiles the blob exactly.

export const VERSION: u16 = 1;
export const PACK_HEADER_SIZE: u32 = 32;
export const ENTRY_HEADER_SIZE: u32 = 24;
export const FOOTER_ENTRY_SIZE: u32 = 16;
export const TRAILER_SIZE: u32 = 32;
/** Upper bound on entries per pack: keeps the footer table within the module's arena. */
export const MAX_ENTRIES: u32 = 16384;
/** Largest body a pack entry may hold (u32 length field). */
export const MAX_BODY: u32 = 0xffffffff;

// "STRAPACK" and "STRAPEND" as little-endian u64, "SPE1" as u32.
export const PACK_MAGIC: u64 = 0x4b43415041525453;
export const END_MAGIC: u64 = 0x444e455041525453;
export const ENTRY_MAGIC: u32 = 0x31455053;

// Status codes returned by the check functions (0 = valid). The TS boundary maps them
// to PackError codes; keep both lists in step (src/pack/errors.ts).
export const OK: i32 = 0;
export const E_MAGIC: i32 = 1;
export const E_VERSION: i32 = 2;
export const E_CHECKSUM: i32 = 3;
export const E_BOUNDS: i32 = 4;
export const E_MISMATCH: i32 = 5;
export const E_TRUNCATED: i32 = 6;
