/**
 * @module JSON in and out for the admin API: bounded request bodies parsed into plain
 * objects with only the fields a route allows, responses and errors as JSON.
 *
 * Error bodies are `{"error": {"code": "...", "message": "..."}}` with the HTTP status of
 * the condition; S3 authentication errors keep their S3 code and status.
 */
import type { RequestContext } from '../s3/context.js';
import { readBody } from '../s3/read-body.js';
import { writeHead } from '../s3/respond.js';
import { S3Error } from '../s3/errors.js';
import { s3ErrorOf } from '../s3/store-errors.js';
import { KeyError, type KeyErrorCode } from '../store/keys-record.js';

/** Largest admin request body: key management documents are a few hundred bytes. */
export const MAX_ADMIN_BODY_BYTES = 64 * 1024;

/** An admin error with an HTTP status and a stable code. */
export class AdminError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'AdminError';
    this.status = status;
    this.code = code;
  }
}

const KEY_ERROR_STATUS: Record<KeyErrorCode, number> = {
  NoSuchAccessKey: 404,
  AccessKeyExists: 409,
  InvalidKeyInput: 400,
  LastAdmin: 409,
  SealMismatch: 500,
};

/** Sends `value` as JSON with `status`. */
export function sendJson(r: RequestContext, status: number, value: unknown): void {
  const body = Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
  writeHead(r, status, { 'content-type': 'application/json', 'content-length': body.length, 'cache-control': 'no-store' });
  r.res.end(body);
  r.bytesOut += body.length;
}

/** Sends `err` as a JSON error (unless a response already started: then the connection is cut). */
export function sendJsonError(r: RequestContext, err: unknown): void {
  let status: number;
  let code: string;
  let message: string;
  if (err instanceof AdminError) ({ status, code, message } = err);
  else if (err instanceof KeyError) ({ status, code, message } = { status: KEY_ERROR_STATUS[err.code], code: err.code, message: err.message });
  else {
    const e = s3ErrorOf(err);
    if (e.code === 'InternalError' && !(err instanceof S3Error)) {
      r.deps.log.error('internal error', { id: r.id, op: r.op, error: String(err), stack: (err as Error)?.stack });
    }
    ({ status, code, message } = e);
  }
  r.errorCode = code;
  if (r.res.headersSent) {
    r.res.destroy();
    return;
  }
  if (!r.incoming.complete) r.res.setHeader('connection', 'close');
  sendJson(r, status, { error: { code, message } });
}

type FieldType = 'string' | 'boolean' | 'number';

/**
 * The request body as a JSON object holding only `fields` (each of its declared type).
 * An empty body is `{}`. Throws AdminError 400 'InvalidJson' for anything else (not JSON,
 * not an object, unknown field, wrong type), and the body errors of readBody (too large,
 * digest mismatch).
 */
export async function readJson<F extends Record<string, FieldType>>(
  r: RequestContext,
  fields: F
): Promise<{ [K in keyof F]?: F[K] extends 'string' ? string : F[K] extends 'number' ? number : boolean }> {
  const bytes = await readBody(r, MAX_ADMIN_BODY_BYTES);
  if (bytes.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new AdminError(400, 'InvalidJson', 'the request body is not valid UTF-8 JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AdminError(400, 'InvalidJson', 'the request body must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const type = Object.hasOwn(fields, k) ? fields[k] : undefined;
    if (type === undefined) throw new AdminError(400, 'InvalidJson', `unknown field ${JSON.stringify(k.slice(0, 64))} (allowed: ${Object.keys(fields).join(', ')})`);
    if (typeof v !== type || (type === 'number' && !Number.isFinite(v))) throw new AdminError(400, 'InvalidJson', `field ${k} must be a ${type}`);
    out[k] = v;
  }
  return out as { [K in keyof F]?: F[K] extends 'string' ? string : F[K] extends 'number' ? number : boolean };
}
