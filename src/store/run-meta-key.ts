/**
 * @module How a run is named in memory by its encoded metadata (the bytes roots and commits
 * carry): the key of RepoState.preparedRuns, the runs opened ahead of the commit that names
 * them (fork-at-time.ts).
 */

/** The registry key of a run: its encoded metadata, base64. Pure. */
export function runMetaKey(meta: Uint8Array): string {
  return Buffer.from(meta).toString('base64');
}
