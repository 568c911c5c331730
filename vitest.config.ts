import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // One Ceph cluster per run, shared by the test/ceph files, stopped at the end (started
    // lazily by the first of them: test/support/ceph-shared.ts).
    globalSetup: ['./test/support/ceph-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The second reporter ends the run with the suites skipped for a missing client and the
    // command that installs each (test/support/clients.ts).
    reporters: ['default', './test/support/missing-clients-reporter.ts'],
  },
});
