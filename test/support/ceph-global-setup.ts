/**
 * @module vitest globalSetup of the Ceph lane: gives the run a directory under the OS temp dir
 * where the test/ceph files share one cluster (test/support/ceph-shared.ts), and at the end of
 * the run (also when tests fail) stops the cluster if a file started one and removes the
 * directory. Starts nothing itself: a run without a test/ceph file, or without the Debian
 * packages, costs one empty directory.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopSharedCeph } from './ceph-shared.js';

export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-ceph-run-'));
  project.provide('cephRun', { dir, ownerPid: process.pid });
  return () => stopSharedCeph(dir);
}
