/** @module Repository thresholds of the model-history tests. */

/**
 * Checkpoint every 7 commits or at 8 KiB of overlay, compact past 2 runs: a run of a few
 * hundred operations flushes the version log tens of times and compacts it, so reads and
 * listings are served from runs, overlays and their merge, not from one overlay.
 */
export const TINY_STORE = { checkpointEvery: 7, overlayBytes: 8 * 1024, maxRuns: 2 };
