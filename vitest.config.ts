import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Three workers on this 2-core machine: vitest 4's default in run mode is cores - 1 (one
    // worker here), and most files wait on fsync, child servers, Ceph or clients rather than
    // CPU. Measured 585 s with two against 1,013 s with one for 234 files; then 446 s with
    // three against 544 s with two for the same 260 files, back to back on one quiet host.
    maxWorkers: 3,
    // One Ceph cluster per run, shared by the test/ceph files, stopped at the end (started
    // lazily by the first of them: test/support/ceph-shared.ts).
    globalSetup: ['./test/support/ceph-global-setup.ts'],
    // Every test process turns on relaxed SIMD as the `strata` command does (src/wasm/relaxed-simd.ts),
    // so the kernels the product runs by default are the ones the suite runs by default; tests
    // that name a flavor (simd, scalar) still get that one.
    setupFiles: ['./test/support/relaxed-simd-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The second reporter ends the run with the suites skipped for a missing client and the
    // command that installs each (test/support/clients.ts).
    reporters: ['default', './test/support/missing-clients-reporter.ts'],
  },
});
