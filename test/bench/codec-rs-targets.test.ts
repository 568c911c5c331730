/**
 * bench:codec's Reed-Solomon targets are judged on the resident API row (the work ISA-L does),
 * not on the copying API row, and say MISS when a row is missing.
 */
import { describe, expect, it } from 'vitest';
import { renderRsTargets } from '../../bench/codec-rs-targets.js';
import type { RsMeasurement, RsResult } from '../../bench/codec-rs.js';

const MiB = 1024 * 1024;
const row = (impl: RsResult['impl'], op: RsResult['op'], mbps: number[]): RsResult => ({ impl, op, k: 10, m: 4, shard: MiB, mbps });

describe('renderRsTargets', () => {
  it('judges encode and reconstruct on the resident row', () => {
    const measured: RsMeasurement = {
      results: [
        row('simd', 'encode', [1000, 1000, 1000]),
        row('simd-resident', 'encode', [3000, 3100, 3200]),
        row('simd-resident', 'reconstruct', [2400, 2500, 2600]),
        row('isal-sse', 'encode', [4000, 4000, 4000]),
      ],
    };
    const md = renderRsTargets(measured, 'simd');
    expect(md).toMatch(/resident API: encode >= 0\.75x ISA-L sse \| 3,100 \/ 4,000 MB\/s = 0\.78x \| PASS/);
    expect(md).toMatch(/within 20% of encode \| 2,500 \/ 3,100 MB\/s = 0\.81x \| PASS/);
    expect(md).toMatch(/copying API: encode against ISA-L sse \(no target; for reference\) \| 1,000 \/ 4,000 MB\/s = 0\.25x \| —/);
  });

  it('judges the relaxed build when that is the default, and shows the plain SIMD build for reference', () => {
    const measured: RsMeasurement = {
      results: [
        row('simd-resident', 'encode', [2000]),
        row('relaxed-resident', 'encode', [3200]),
        row('relaxed-resident', 'reconstruct', [3000]),
        row('isal-sse', 'encode', [4000]),
      ],
    };
    const md = renderRsTargets(measured, 'relaxed');
    expect(md).toMatch(/Strata relaxed resident API: encode >= 0\.75x ISA-L sse \| 3,200 \/ 4,000 MB\/s = 0\.80x \| PASS/);
    expect(md).toMatch(/Strata simd resident API \(the build where relaxed SIMD is refused\): encode against ISA-L sse \(no target; for reference\) \| 2,000 \/ 4,000 MB\/s = 0\.50x \| —/);
    expect(renderRsTargets(measured, 'simd')).not.toMatch(/the build where relaxed SIMD is refused/);
  });

  it('says MISS below the ratio and when the resident or ISA-L row is missing', () => {
    const slow: RsMeasurement = {
      results: [row('simd-resident', 'encode', [2900]), row('simd-resident', 'reconstruct', [2000]), row('isal-sse', 'encode', [4000])],
    };
    const md = renderRsTargets(slow, 'simd');
    expect(md).toMatch(/= 0\.73x \| MISS/);
    expect(md).toMatch(/= 0\.69x \| MISS/);
    const none = renderRsTargets({ results: [row('simd', 'encode', [9000])], isalSkipped: 'skipped: no cc' }, 'simd');
    expect(none).toMatch(/skipped: no cc \| MISS/);
    expect(none).toMatch(/reconstruct within 20% of encode \| not measured \| MISS/);
  });
});
