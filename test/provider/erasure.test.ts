/** The erasure provider against the shared provider contract, over memory and fs children. */
import { afterAll } from 'vitest';
import { MAX_LOGICAL_KEY_BYTES } from '../../src/provider/erasure/child-key.js';
import { runProviderContract } from './contract.js';
import { cleanupRigs, makeRig } from './erasure-helpers.js';

afterAll(cleanupRigs);

runProviderContract({
  name: 'erasure 4+2 over memory',
  create: async () => (await makeRig({ kind: 'memory' })).provider,
  buffersPuts: true, // the memory children hold every fragment whole
  etagPerWrite: true,
  maxKeyBytes: MAX_LOGICAL_KEY_BYTES,
});

runProviderContract({
  name: 'erasure 4+2 over fs',
  create: async () => (await makeRig({ kind: 'fs' })).provider,
  etagPerWrite: true,
  // Six fragment puts stream at once: six fs writers' in-flight buffers (6 plain fs puts in
  // parallel alone show 3-4 MB transient growth on this machine) plus the fragment queues.
  fanOutBufferBytes: 6 * 1024 * 1024,
  maxKeyBytes: MAX_LOGICAL_KEY_BYTES,
});
