/**
 * @module Not outliving the npm that started us. `npm start` and `npx strata-s3` run the
 * server under npm (through `sh -c` unless the script says `exec`); when npm is stopped
 * before its child — SIGTERM that a shell does not pass on, or SIGKILL that nobody can — the
 * server used to live on as an orphan, holding the repository lock. Started by npm (it sets
 * `npm_command` / `npm_lifecycle_event` in the environment), the server watches its parent
 * and stops gracefully once it is gone (the kernel re-parents an orphan, so `ppid` changes).
 * Started any other way (systemd, a shell, a container), nothing is watched.
 */

/** How often the parent pid is compared, ms: a stop within a couple of seconds is enough. */
export const PARENT_POLL_MS = 1000;

/** True when `env` says npm (run-script or exec) started this process. */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.npm_command || env.npm_lifecycle_event);
}

/**
 * Calls `onGone` once when this process's parent changes from what it is now. Returns the
 * function that stops watching. The timer does not keep the process alive.
 */
export function watchParent(
  onGone: (oldParent: number) => void,
  pollMs = PARENT_POLL_MS
): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
