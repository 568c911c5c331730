/**
 * @module The verbs of the `strata` command, in `strata --help` order. A new verb is a file
 * exporting a Verb (verb.ts) and one entry here.
 */
import { lifecycleVerb } from './lifecycle.js';
import { serveVerb } from './serve.js';
import { verifyVerb } from './verify.js';
import { keysVerb } from './keys.js';
import { forkVerb } from './fork.js';
import { historyVerb, historyWindowVerb } from './history.js';
import { restoreVerb } from './restore.js';
import { gcVerb } from './gc.js';
import { expireVerb } from './expire.js';
import { scrubVerb } from './scrub.js';
import { domainsVerb } from './domains.js';
import type { Verb } from './verb.js';

export const VERBS: readonly Verb[] = [serveVerb, verifyVerb, keysVerb, forkVerb, historyVerb, historyWindowVerb, restoreVerb, expireVerb, gcVerb, lifecycleVerb, scrubVerb, domainsVerb];
