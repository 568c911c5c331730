import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The second reporter ends the run with the suites skipped for a missing client and the
    // command that installs each (test/support/clients.ts).
    reporters: ['default', './test/support/missing-clients-reporter.ts'],
  },
});
