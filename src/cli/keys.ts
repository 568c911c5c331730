/**
 * @module `strata keys`: access key management.
 *
 *   strata keys list                                   keys, capabilities and grants (no secrets)
 *   strata keys create [--name N] [--id ID] [--admin] [--no-create-bucket]
 *                                                      prints the new secret ONCE
 *   strata keys delete ID
 *   strata keys grant  ID [BUCKET] [--read] [--write] [--owner] [--admin] [--create-bucket]
 *   strata keys revoke ID [BUCKET] [--read] [--write] [--owner] [--admin] [--create-bucket]
 *
 * Where it acts: on a stopped local repository directly (taking its directory lock, with the
 * master key that seals secrets); when a server holds the lock, through that server's admin
 * API (its address is in <data>/strata-server.json), signed with an admin key from
 * STRATA_ACCESS_KEY/STRATA_SECRET_KEY or <data>/strata-credentials.json. `--endpoint URL`
 * always goes through the server at URL. A repository that is not a local directory (an S3
 * URL) has no lock to tell whether a server runs on it: use --endpoint, or --offline to
 * assert that none does (a server running meanwhile would stop writing: its next commit
 * finds the anchor moved).
 *
 * Exit codes: 0 done, 1 refused (no such key, bucket, duplicate, last admin...), 2 bad usage
 * or the repository/server cannot be used.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, homeDirectory } from '../store/open.js';
import { erasureConfigFileOption, erasureOption, erasureSetupForVerb } from '../server/erasure-option.js';
import type { ErasureConfig } from '../provider/erasure/types.js';
import { ProviderError } from '../provider/provider.js';
import { KeyRegistry, type KeyView } from '../store/keys-registry.js';
import { createSealer } from '../store/keys-seal.js';
import { KeyError } from '../store/keys-record.js';
import type { KeyChange } from '../store/keys.js';
import { StoreError } from '../store/errors.js';
import { defaultMasterKeyFile, loadMasterKey } from '../server/master-key.js';
import { readEndpointFile } from '../server/endpoint-file.js';
import { adminRequest, AdminClientError, type AdminClientOptions } from '../admin/client.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { remoteCredentials } from './admin-target.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, pathType, stringType, type OptionType } from '../server/option-types.js';

const NOTES = `commands:
  list                              keys, capabilities and grants (no secrets)
  create                            a new key (--name, --id, --admin, --no-create-bucket); its secret
                                    is printed once
  delete ID                         delete a key (the buckets it owned become admin-only)
  grant ID [BUCKET] <flags>         add --read/--write/--owner on BUCKET, or --admin/--create-bucket
  revoke ID [BUCKET] <flags>        remove them

where it acts: a stopped local repository directly (its lock and master key); while a server
holds it, that server's admin API (address in <data>/strata-server.json; an admin key from
STRATA_ACCESS_KEY/STRATA_SECRET_KEY or <data>/strata-credentials.json); --endpoint URL always
goes through the server at URL.

exit codes: 0 done, 1 refused (no such key or bucket, duplicate, last admin), 2 bad command
line, or the repository or server cannot be used.`;

/** Resolved options of one `strata keys` invocation. */
interface KeysOptions {
  data: string;
  erasure?: string;
  configFile?: string;
  endpoint?: string;
  accessKey?: string;
  region: string;
  masterKeyFile?: string;
  offline?: boolean;
  json?: boolean;
  name?: string;
  id?: string;
  admin?: boolean;
  noCreateBucket?: boolean;
  read?: boolean;
  write?: boolean;
  owner?: boolean;
  createBucket?: boolean;
}

const opt = <K extends keyof KeysOptions & string>(def: Parameters<typeof defineOption<KeysOptions, K>>[0]) => defineOption<KeysOptions, K>(def);
const sw = <K extends keyof KeysOptions & string>(name: string, key: K, help: string) =>
  opt<K>({ name, key, type: booleanType() as OptionType<NonNullable<KeysOptions[K]>>, help, from: { env: false, file: false } });

const COMMON_OPTIONS = [
  opt({ name: 'data', key: 'data', env: 'STRATA_DATA_DIR', type: pathType('<dir|url>'), default: './data', help: 'the repository' }),
  erasureOption<KeysOptions>(),
  erasureConfigFileOption<KeysOptions>(),
  opt({ name: 'endpoint', key: 'endpoint', env: 'STRATA_ENDPOINT', type: stringType({ placeholder: '<url>' }), help: 'act through the server at URL' }),
  opt({ name: 'access-key', key: 'accessKey', env: 'STRATA_ACCESS_KEY', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: 'admin key for the server' }),
  opt({ name: 'region', key: 'region', type: stringType({ maxLength: 64, placeholder: '<name>' }), default: 'us-east-1', help: 'signing region' }),
  opt({ name: 'master-key-file', key: 'masterKeyFile', env: 'STRATA_MASTER_KEY_FILE', type: pathType('<file>'), help: 'master key of a stopped repository' }),
  sw('offline', 'offline', 'act on a repository that is not a local directory'),
  sw('json', 'json', 'machine-readable output'),
];
const FLAG_OPTIONS = [
  sw('read', 'read', 'list and read objects'),
  sw('write', 'write', 'write and delete objects'),
  sw('owner', 'owner', 'manage the bucket'),
  sw('admin', 'admin', 'everything, key management included'),
  sw('create-bucket', 'createBucket', 'create buckets'),
];
const CREATE_OPTIONS = [
  opt({ name: 'name', key: 'name', type: stringType({ maxLength: 128, placeholder: '<name>' }), help: 'create: display name (default: the id)', from: { env: false, file: false } }),
  opt({ name: 'id', key: 'id', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: 'create: access key id (default: generated)', from: { env: false, file: false } }),
  sw('no-create-bucket', 'noCreateBucket', 'create: a key that may not create buckets'),
];
/** Every option of the verb (the command line is parsed against all of them, then checked per command). */
const ALL_OPTIONS: OptionDef<KeysOptions>[] = [...COMMON_OPTIONS, ...CREATE_OPTIONS, ...FLAG_OPTIONS];
const names = (defs: OptionDef<KeysOptions>[]) => defs.map((d) => d.name);

/** Each command's options (beyond the common ones) and its positional arguments [min, max]. */
const COMMANDS: Record<string, { options: string[]; positionals: [number, number] }> = {
  list: { options: [], positionals: [0, 0] },
  create: { options: [...names(CREATE_OPTIONS), 'admin'], positionals: [0, 0] },
  delete: { options: [], positionals: [1, 1] },
  grant: { options: names(FLAG_OPTIONS), positionals: [1, 2] },
  revoke: { options: names(FLAG_OPTIONS), positionals: [1, 2] },
};

/** The command, its arguments and options; throws UsageError (exit 2) for what does not apply. */
function parse(args: ParsedArgs, env: NodeJS.ProcessEnv): { command: string; positionals: string[]; o: KeysOptions } {
  const [command, ...positionals] = args.positionals;
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (!spec) throw new UsageError(command === undefined ? 'name a command: list, create, delete, grant or revoke' : `unknown keys command '${command.slice(0, 40)}'`);
  const allowed = new Set([...names(COMMON_OPTIONS), ...spec.options]);
  for (const name of args.flags.keys()) if (!allowed.has(name)) throw new UsageError(`--${name} does not apply to 'keys ${command}'`);
  const [min, max] = spec.positionals;
  if (positionals.length < min || positionals.length > max) {
    throw new UsageError(`'keys ${command}' takes ${min === max ? min : `${min} to ${max}`} argument(s), got ${positionals.length}`);
  }
  return { command: command!, positionals, o: resolveOptions(ALL_OPTIONS, { flags: args.flags, env }) as KeysOptions };
}

/** The operations, whether on the repository itself or through a server. */
interface KeyManager {
  list(): Promise<KeyView[]>;
  create(input: { id?: string; name?: string; admin?: boolean; createBucket?: boolean }): Promise<{ key: KeyView; secretAccessKey: string }>;
  delete(id: string): Promise<{ deleted: string; ownedBuckets: string[] }>;
  change(id: string, mode: 'grant' | 'revoke', change: KeyChange): Promise<KeyView>;
  close(): Promise<void>;
  where: string;
}

function remoteManager(opts: AdminClientOptions): KeyManager {
  return {
    where: `server ${opts.endpoint}`,
    list: async () => ((await adminRequest(opts, 'GET', ['keys'])) as { keys: KeyView[] }).keys,
    create: async (input) => (await adminRequest(opts, 'POST', ['keys'], input)) as { key: KeyView; secretAccessKey: string },
    delete: async (id) => (await adminRequest(opts, 'DELETE', ['keys', id])) as { deleted: string; ownedBuckets: string[] },
    change: async (id, mode, change) => ((await adminRequest(opts, 'POST', ['keys', id, mode], change)) as { key: KeyView }).key,
    close: async () => undefined,
  };
}

async function localManager(location: string, o: KeysOptions, env: NodeJS.ProcessEnv, erasure: ErasureConfig | undefined): Promise<KeyManager> {
  const dir = homeDirectory(location, erasure);
  if (dir && !existsSync(dir)) throw new UsageError(`no Strata repository at ${dir} (no such directory)`);
  const store = await openStore(location, { create: false, ...(erasure ? { erasure } : {}) });
  try {
    const file = o.masterKeyFile;
    const fallback = dir && existsSync(defaultMasterKeyFile(dir)) ? defaultMasterKeyFile(dir) : undefined;
    // Never generated here: a key sealed with a new master key would not open on the server.
    const { masterKey } = loadMasterKey({
      ...(env.STRATA_MASTER_KEY ? { value: env.STRATA_MASTER_KEY } : {}),
      ...((file ?? fallback) ? { file: (file ?? fallback)! } : {}),
    });
    const registry = new KeyRegistry(store, masterKey ? createSealer(masterKey) : undefined);
    const checked = () => registry.verifyAll();
    return {
      where: `repository ${location}`,
      list: async () => registry.list(),
      create: async (input) => {
        checked();
        const { record, secret } = await registry.create(input);
        return { key: registry.view(record), secretAccessKey: secret };
      },
      delete: async (id) => {
        checked();
        const { key, owned } = await registry.delete(id);
        return { deleted: key.id, ownedBuckets: owned };
      },
      change: async (id, mode, change) => {
        checked();
        return registry.view(await registry.change(id, mode, change));
      },
      close: () => store.close(),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** Chooses where to act (see the module header). */
async function manager(o: KeysOptions, env: NodeJS.ProcessEnv): Promise<KeyManager> {
  const location = o.data;
  const erasure = await erasureSetupForVerb(o);
  const dir = homeDirectory(location, erasure);
  const { endpoint, region } = o;
  if (endpoint) {
    if (!/^https?:\/\//.test(endpoint)) throw new UsageError(`--endpoint must be an http(s) URL (got ${endpoint})`);
    return remoteManager({ endpoint, credentials: remoteCredentials(o, dir, env), region });
  }
  if (!dir && !o.offline) {
    throw new UsageError(`${location} is not a local directory: use --endpoint URL of a server on it, or --offline if no server runs on it`);
  }
  try {
    return await localManager(location, o, env, erasure);
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'Locked') || !dir) throw err;
    const running = readEndpointFile(dir);
    if (!running) throw new UsageError(`${err.message}; pass --endpoint URL of that server to act through it`);
    return remoteManager({ endpoint: running.url, credentials: remoteCredentials(o, dir, env), region });
  }
}

const yesNo = (b: boolean) => (b ? 'yes' : 'no');
const grantText = (g: KeyView['grants'][number]) => `${g.bucket}:${g.read ? 'r' : '-'}${g.write ? 'w' : '-'}${g.owner ? 'o' : '-'}`;

function describe(k: KeyView): string {
  return [
    `access key:     ${k.id}`,
    `name:           ${k.name}`,
    `admin:          ${yesNo(k.admin)}`,
    `create buckets: ${yesNo(k.createBucket)}`,
    `grants:         ${k.grants.map(grantText).join(' ') || '(none)'}`,
  ].join('\n');
}

function table(keys: KeyView[]): string {
  const rows = [['ACCESS KEY', 'NAME', 'ADMIN', 'CREATE', 'GRANTS (r=read w=write o=owner)'], ...keys.map((k) => [k.id, k.name, yesNo(k.admin), yesNo(k.createBucket), k.grants.map(grantText).join(' ') || '-'])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

function changeOf(positionals: string[], o: KeysOptions): KeyChange {
  const c: KeyChange = {};
  if (positionals[1] !== undefined) c.bucket = positionals[1];
  for (const f of ['read', 'write', 'owner', 'admin', 'createBucket'] as const) if (o[f]) c[f] = true;
  return c;
}

export const keysVerb: Verb = {
  name: 'keys',
  summary: 'manage access keys: list, create, delete, grant, revoke',
  synopsis: '<list|create|delete|grant|revoke> [ID] [BUCKET] [options]',
  description: `Manages the repository's access keys and their permissions (per bucket: read, write,
owner; per key: admin, create-bucket).`,
  options: ALL_OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'COMMAND', min: 1, max: 3 },
  notes: NOTES,
  run: (args, env) => runKeys(args, env),
};

/** Runs `strata keys ...` (parsed by main.ts); resolves with the exit code (see NOTES). */
async function runKeys(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const { command, positionals, o } = parse(args, env);
  const json = o.json === true;
  const out = (value: unknown, text: string) => process.stdout.write(`${json ? JSON.stringify(value, null, 2) : text}\n`);
  let m: KeyManager | undefined;
  try {
    m = await manager(o, env);
    switch (command) {
      case 'list': {
        const keys = await m.list();
        out({ keys }, table(keys));
        break;
      }
      case 'create': {
        const input: Parameters<KeyManager['create']>[0] = {};
        if (o.id !== undefined) input.id = o.id;
        if (o.name !== undefined) input.name = o.name;
        if (o.admin) input.admin = true;
        if (o.noCreateBucket) input.createBucket = false;
        const r = await m.create(input);
        out(r, `${describe(r.key)}\nsecret key:     ${r.secretAccessKey}\n\nThe secret key is shown only now: store it safely.`);
        break;
      }
      case 'delete': {
        const r = await m.delete(positionals[0]!);
        out(r, `deleted ${r.deleted}${r.ownedBuckets.length ? ` (it owned ${r.ownedBuckets.join(', ')}: now only admin keys and grants reach them)` : ''}`);
        break;
      }
      case 'grant':
      case 'revoke': {
        const k = await m.change(positionals[0]!, command, changeOf(positionals, o));
        out({ key: k }, describe(k));
        break;
      }
    }
    return 0;
  } catch (err) {
    const refused = err instanceof KeyError || err instanceof AdminClientError || (err instanceof StoreError && err.code === 'NoSuchBucket');
    const code = (err as { code?: string }).code;
    process.stderr.write(`strata keys: ${code && refused ? `${code}: ` : ''}${(err as Error).message}${m ? ` (${m.where})` : ''}\n`);
    return refused && !(err instanceof AdminClientError && (err.status === 401 || err.status === 403 || err.status >= 500)) ? 1 : 2;
  } finally {
    await m?.close();
  }
}
