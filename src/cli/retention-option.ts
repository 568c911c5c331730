/**
 * @module The `--retention` option of the verbs that act on history windows on a stopped
 * repository (`strata expire`, `strata history-window`): the server-wide default window is a
 * server flag, not stored in the repository, so a verb opening the repository itself must be
 * told it (same flag and variable as `strata serve`: STRATA_RETENTION). Through a server, the
 * server's own value applies and this one is ignored.
 */
import { defineOption, type OptionDef } from '../server/options.js';
import { durationType } from '../server/option-types.js';
import { DEFAULT_HISTORY_WINDOW_MS, MAX_HISTORY_WINDOW_MS } from '../store/history-window.js';

export interface RetentionOption {
  retention: number;
}

export const RETENTION_OPTION: OptionDef<RetentionOption> = defineOption<RetentionOption, 'retention'>({
  name: 'retention',
  key: 'retention',
  env: 'STRATA_RETENTION',
  type: durationType({ min: 0, max: MAX_HISTORY_WINDOW_MS }),
  default: DEFAULT_HISTORY_WINDOW_MS,
  help: "the server's default history window (as strata serve --retention); only used on a stopped repository",
});

/** The repository options `o` asks for. */
export function retentionStoreOptions(o: RetentionOption): { retentionMs: number } {
  return { retentionMs: o.retention };
}
