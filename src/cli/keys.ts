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
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, localDirectory } from '../store/open.js';
import { ProviderError } from '../provider/provider.js';
import { KeyRegistry, type KeyView } from '../store/keys-registry.js';
import { createSealer } from '../store/keys-seal.js';
import { KeyError } from '../store/keys-record.js';
import type { KeyChange } from '../store/keys.js';
import { StoreError } from '../store/errors.js';
import { defaultMasterKeyFile, loadMasterKey } from '../server/master-key.js';
import { CREDENTIALS_FILE } from '../server/credentials.js';
import { readEndpointFile } from '../server/endpoint-file.js';
import { adminRequest, AdminClientError, type AdminClientOptions } from '../admin/client.js';
import { parseArgs, UsageError, type PositionalSpec } from './args.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, OptionError, pathType, stringType, type OptionType } from '../server/option-types.js';

const USAGE = `usage: strata keys <command> [options]

commands:
  list                                      list keys, capabilities and grants (no secrets)
  create [--name N] [--id ID] [--admin] [--no-create-bucket]
                                            create a key; its secret is printed once
  delete ID                                 delete a key (it stops owning its buckets)
  grant  ID [BUCKET] [--read] [--write] [--owner] [--admin] [--create-bucket]
  revoke ID [BUCKET] [--read] [--write] [--owner] [--admin] [--create-bucket]

options:
  --data DIR|URL        the repository (STRATA_DATA_DIR, default ./data)
  --endpoint URL        act through the server at URL (STRATA_ENDPOINT)
  --access-key ID       admin key for --endpoint (STRATA_ACCESS_KEY; secret: STRATA_SECRET_KEY)
  --region R            signing region for --endpoint (default us-east-1)
  --master-key-file F   master key for a stopped repository (STRATA_MASTER_KEY_FILE, STRATA_MASTER_KEY)
  --offline             act on a repository that is not a local directory (no server may run on it)
  --json                machine-readable output
`;

/** Resolved options of one `strata keys` invocation. */
interface KeysOptions {
  data: string;
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
/** Each command's options and positional arguments. */
const COMMANDS: Record<string, { options: OptionDef<KeysOptions>[]; positionals: PositionalSpec }> = {
  list: { options: COMMON_OPTIONS, positionals: { name: '', max: 0 } },
  create: {
    options: [
      ...COMMON_OPTIONS,
      opt({ name: 'name', key: 'name', type: stringType({ maxLength: 128, placeholder: '<name>' }), help: 'display name', from: { env: false, file: false } }),
      opt({ name: 'id', key: 'id', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: 'access key id (default: generated)', from: { env: false, file: false } }),
      sw('admin', 'admin', 'an admin key'),
      sw('no-create-bucket', 'noCreateBucket', 'may not create buckets'),
    ],
    positionals: { name: '', max: 0 },
  },
  delete: { options: COMMON_OPTIONS, positionals: { name: 'ID', min: 1, max: 1 } },
  grant: { options: [...COMMON_OPTIONS, ...FLAG_OPTIONS], positionals: { name: 'ID [BUCKET]', min: 1, max: 2 } },
  revoke: { options: [...COMMON_OPTIONS, ...FLAG_OPTIONS], positionals: { name: 'ID [BUCKET]', min: 1, max: 2 } },
};

function parse(args: string[]): { command: string; positionals: string[]; o: KeysOptions } {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return { command: 'help', positionals: [], o: { data: '', region: '' } };
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown keys command '${command.slice(0, 40)}'`);
  const parsed = parseArgs(rest, { options: spec.options as readonly OptionDef<never>[], positionals: spec.positionals });
  if (parsed.help || parsed.version) return { command: 'help', positionals: [], o: { data: '', region: '' } };
  const o = resolveOptions(spec.options, { flags: parsed.flags, env: process.env }) as KeysOptions;
  return { command, positionals: parsed.positionals, o };
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

function remoteCredentials(o: KeysOptions, dataDir: string | undefined): AdminClientOptions['credentials'] {
  const id = o.accessKey;
  const secret = process.env.STRATA_SECRET_KEY;
  if (id && secret) return { accessKeyId: id, secretAccessKey: secret };
  if (id) throw new UsageError('set STRATA_SECRET_KEY for the admin key given with --access-key / STRATA_ACCESS_KEY');
  const file = dataDir ? join(dataDir, CREDENTIALS_FILE) : undefined;
  if (file && existsSync(file)) {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { accessKeyId?: string; secretAccessKey?: string };
    if (c.accessKeyId && c.secretAccessKey) return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey };
  }
  throw new UsageError('no admin credentials for the server: set STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
}

async function localManager(location: string, o: KeysOptions): Promise<KeyManager> {
  const dir = localDirectory(location);
  if (dir && !existsSync(dir)) throw new UsageError(`no Strata repository at ${dir} (no such directory)`);
  const store = await openStore(location, { create: false });
  try {
    const file = o.masterKeyFile;
    const fallback = dir && existsSync(defaultMasterKeyFile(dir)) ? defaultMasterKeyFile(dir) : undefined;
    // Never generated here: a key sealed with a new master key would not open on the server.
    const { masterKey } = loadMasterKey({
      ...(process.env.STRATA_MASTER_KEY ? { value: process.env.STRATA_MASTER_KEY } : {}),
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
async function manager(o: KeysOptions): Promise<KeyManager> {
  const location = o.data;
  const dir = localDirectory(location);
  const { endpoint, region } = o;
  if (endpoint) {
    if (!/^https?:\/\//.test(endpoint)) throw new UsageError(`--endpoint must be an http(s) URL (got ${endpoint})`);
    return remoteManager({ endpoint, credentials: remoteCredentials(o, dir), region });
  }
  if (!dir && !o.offline) {
    throw new UsageError(`${location} is not a local directory: use --endpoint URL of a server on it, or --offline if no server runs on it`);
  }
  try {
    return await localManager(location, o);
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'Locked') || !dir) throw err;
    const running = readEndpointFile(dir);
    if (!running) throw new UsageError(`${err.message}; pass --endpoint URL of that server to act through it`);
    return remoteManager({ endpoint: running.url, credentials: remoteCredentials(o, dir), region });
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

/** Runs `strata keys ...`; returns the exit code (see the module header). */
export async function keysCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args);
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    process.stderr.write(`strata keys: ${err.message}\n${USAGE}`);
    return 2;
  }
  const { command, positionals, o } = parsed;
  if (command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const json = o.json === true;
  const out = (value: unknown, text: string) => process.stdout.write(`${json ? JSON.stringify(value, null, 2) : text}\n`);
  let m: KeyManager | undefined;
  try {
    m = await manager(o);
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
