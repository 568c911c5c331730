/**
 * @module `strata domains`: the failure domains of an erasure repository — id, labels, state
 * (probed, bounded by the domain timeout), and the fragments and bytes each holds.
 *
 *   strata domains --data LOCATION [--erasure k+m] [--json]
 *
 * On a repository a server holds, it asks that server (GET /_strata/admin/v1/domains).
 * Exit codes: 0 every domain answers, 1 a domain failed, 2 bad command line or the repository or
 * server cannot be used (or it is not an erasure repository).
 */
import { adminRequest } from '../admin/client.js';
import { adminDomains, type AdminDomainsResult } from '../admin/scrub.js';
import type { DomainHealth } from '../provider/erasure/types.js';
import type { ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { resolveOptions, type OptionDef } from '../server/options.js';
import { reportFailure, TARGET_NOTES, TARGET_OPTIONS, type TargetOptions } from './admin-target.js';
import { openProviderTarget, type ProviderTarget } from './provider-target.js';
import { UsageError } from './args.js';

/** Listing every domain for usage may take a while on a large repository (minutes, not 30 s). */
const REMOTE_TIMEOUT_MS = 30 * 60 * 1000;

const OPTIONS = TARGET_OPTIONS as OptionDef<TargetOptions>[];

function human(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** The table `strata domains` prints for `r`. */
export function domainsTable(r: AdminDomainsResult): string {
  const rows: string[][] = [['ID', 'LABELS', 'STATE', 'BLOBS', 'BYTES']];
  for (const d of r.domains) {
    const labels = Object.entries(d.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    rows.push([d.id, labels || '-', d.state === 'ok' ? 'ok' : `FAILED${d.error ? `: ${d.error.slice(0, 80)}` : ''}`, d.blobs === undefined ? '?' : String(d.blobs), d.bytes === undefined ? '?' : human(d.bytes)]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const failed = r.domains.filter((d: DomainHealth) => d.state !== 'ok').length;
  const out = rows.map((row) => row.map((cell, c) => (c === 3 || c === 4 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
  out.push('', `erasure ${r.k}+${r.m} over ${r.domains.length} domains; ${failed ? `${failed} FAILED (reads survive up to ${r.m} missing fragments per blob)` : 'all answering'}`);
  return out.join('\n');
}

export const domainsVerb: Verb = {
  name: 'domains',
  summary: 'failure domains of an erasure repository: health and usage',
  synopsis: '[options]',
  description: `Probes every failure domain of an erasure-coded repository and lists its id, labels, state,
and the fragments (and replicas) it holds with their bytes.`,
  options: OPTIONS as readonly OptionDef<never>[],
  notes: `${TARGET_NOTES}

exit codes: 0 every domain answers, 1 a domain failed, 2 bad command line, or the repository or
server cannot be used (or it is not erasure-coded).`,
  run: (args, env) => runDomainsVerb(args, env),
};

async function runDomainsVerb(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as TargetOptions;
  let t: ProviderTarget | undefined;
  try {
    t = await openProviderTarget(o, env, (l) => process.stderr.write(`domains: ${l}\n`));
    const r = t.provider ? await adminDomains(t.provider) : ((await adminRequest(t.remote, 'GET', ['domains'], undefined, REMOTE_TIMEOUT_MS)) as AdminDomainsResult);
    process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${domainsTable(r)}\n`);
    return r.domains.some((d) => d.state !== 'ok') ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = reportFailure('domains', err, t?.where);
    return (err as { code?: string }).code === 'NotErasure' ? 2 : code;
  } finally {
    await t?.close();
  }
}
