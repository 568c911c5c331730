/** The memory provider against the shared contract, plus its byte budget. */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { runProviderContract } from './contract.js';
import { expectCode } from './helpers.js';

runProviderContract({
  name: 'memory',
  create: () => createMemoryProvider(),
  buffersPuts: true,
  etagPerWrite: true,
});

describe('memory provider', () => {
  it('refuses puts beyond maxBytes with Unavailable and counts replacements once', async () => {
    const p = await createMemoryProvider({ maxBytes: 10 });
    await p.put('a', new Uint8Array(6));
    await p.put('a', new Uint8Array(8));
    await expectCode(p.put('b', new Uint8Array(3)), 'Unavailable');
    await p.delete('a');
    await p.put('b', new Uint8Array(10));
    expect((await p.head('b')).size).toBe(10);
  });
});
