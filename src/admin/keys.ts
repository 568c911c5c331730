/**
 * @module Admin API: access key management.
 *
 *   GET    /_strata/admin/v1/keys                 list keys (no secrets)
 *   POST   /_strata/admin/v1/keys                 create {id?, secret?, name?, admin?, createBucket?}
 *                                                 -> 201 {key, secretAccessKey} (the only time it is shown)
 *   GET    /_strata/admin/v1/keys/{id}            one key
 *   DELETE /_strata/admin/v1/keys/{id}            delete -> {deleted, ownedBuckets}
 *   POST   /_strata/admin/v1/keys/{id}/grant      {bucket?, read?, write?, owner?, admin?, createBucket?}
 *   POST   /_strata/admin/v1/keys/{id}/revoke     same fields
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { KeyRegistry } from '../store/keys-registry.js';
import type { RequestContext } from '../s3/context.js';

const CHANGE_FIELDS = { bucket: 'string', read: 'boolean', write: 'boolean', owner: 'boolean', admin: 'boolean', createBucket: 'boolean' } as const;

function registryOf(r: RequestContext): KeyRegistry {
  return r.deps.keys;
}

function requireKey(r: RequestContext, id: string) {
  const k = registryOf(r).key(id);
  if (!k) throw new AdminError(404, 'NoSuchAccessKey', `no access key ${id}`);
  return k;
}

async function change(r: RequestContext, id: string, mode: 'grant' | 'revoke'): Promise<void> {
  const body = await readJson(r, CHANGE_FIELDS);
  const k = await registryOf(r).change(id, mode, body);
  sendJson(r, 200, { key: registryOf(r).view(k) });
}

/** The key management routes (mounted under /_strata/admin/v1). */
export const KEY_ROUTES: AdminRoute[] = [
  {
    method: 'GET',
    path: ['keys'],
    op: 'AdminListKeys',
    handle: async (r) => sendJson(r, 200, { keys: registryOf(r).list() }),
  },
  {
    method: 'POST',
    path: ['keys'],
    op: 'AdminCreateKey',
    handle: async (r) => {
      const body = await readJson(r, { id: 'string', secret: 'string', name: 'string', admin: 'boolean', createBucket: 'boolean' });
      const { record, secret } = await registryOf(r).create(body);
      sendJson(r, 201, { key: registryOf(r).view(record), secretAccessKey: secret });
    },
  },
  {
    method: 'GET',
    path: ['keys', ':id'],
    op: 'AdminGetKey',
    handle: async (r, p) => sendJson(r, 200, { key: registryOf(r).view(requireKey(r, p.id!)) }),
  },
  {
    method: 'DELETE',
    path: ['keys', ':id'],
    op: 'AdminDeleteKey',
    handle: async (r, p) => {
      const { key, owned } = await registryOf(r).delete(p.id!);
      sendJson(r, 200, { deleted: key.id, ownedBuckets: owned });
    },
  },
  { method: 'POST', path: ['keys', ':id', 'grant'], op: 'AdminGrant', handle: (r, p) => change(r, p.id!, 'grant') },
  { method: 'POST', path: ['keys', ':id', 'revoke'], op: 'AdminRevoke', handle: (r, p) => change(r, p.id!, 'revoke') },
];
