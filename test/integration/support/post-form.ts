/**
 * @module POST Object forms for tests, signed here with node:crypto independently of the
 * server: the policy document, its SigV4 or SigV2 signature, and a multipart/form-data body
 * laid out as browsers write it (fields in order, the file last unless told otherwise).
 */
import { createHmac } from 'node:crypto';
import { ACCESS_KEY, REGION, SECRET_KEY } from '../harness.js';

export type Condition = Record<string, string> | (string | number)[];

/** The base64 policy for `conditions`, expiring `expiresInSeconds` from now (negative: past). */
export function policyOf(conditions: Condition[], expiresInSeconds = 3600): string {
  const expiration = new Date(Date.now() + expiresInSeconds * 1000).toISOString();
  return Buffer.from(JSON.stringify({ expiration, conditions })).toString('base64');
}

const amzDateOf = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

/** SigV4 form fields (x-amz-algorithm, -credential, -date, -signature, policy) for `conditions`. */
export function sigV4Fields(
  conditions: Condition[],
  opts: { expiresInSeconds?: number; accessKey?: string; secret?: string; region?: string; date?: Date } = {}
): Record<string, string> {
  const date = opts.date ?? new Date();
  const amzDate = amzDateOf(date);
  const day = amzDate.slice(0, 8);
  const region = opts.region ?? REGION;
  const credential = `${opts.accessKey ?? ACCESS_KEY}/${day}/${region}/s3/aws4_request`;
  const policy = policyOf(
    [...conditions, { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' }, { 'x-amz-credential': credential }, { 'x-amz-date': amzDate }],
    opts.expiresInSeconds
  );
  let key = createHmac('sha256', `AWS4${opts.secret ?? SECRET_KEY}`).update(day).digest();
  for (const part of [region, 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return {
    'x-amz-algorithm': 'AWS4-HMAC-SHA256',
    'x-amz-credential': credential,
    'x-amz-date': amzDate,
    policy,
    'x-amz-signature': createHmac('sha256', key).update(policy).digest('hex'),
  };
}

/** SigV2 form fields (AWSAccessKeyId, policy, signature) for `conditions`. */
export function sigV2Fields(conditions: Condition[], expiresInSeconds = 3600): Record<string, string> {
  return sigV2ForPolicy(policyOf(conditions, expiresInSeconds));
}

/** SigV2 form fields signing `policy` exactly as given (e.g. a malformed document). */
export function sigV2ForPolicy(policy: string): Record<string, string> {
  return { AWSAccessKeyId: ACCESS_KEY, policy, signature: createHmac('sha1', SECRET_KEY).update(policy).digest('base64') };
}

export interface FileSpec {
  /** The form control's name; S3 wants `file`. */
  name?: string;
  filename?: string;
  type?: string;
  data: Uint8Array;
}

export const BOUNDARY = '----StrataTestFormBoundaryQ8Yh2ZkX';

/**
 * A multipart/form-data body: `fields` in order, then the file, then `after` (fields S3
 * ignores). Returns the body and its Content-Type.
 */
export function formBody(fields: Record<string, string>, file: FileSpec | undefined, after: Record<string, string> = {}): { body: Buffer; contentType: string } {
  const out: Buffer[] = [];
  const field = (name: string, value: string) =>
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.from(value, 'utf8'), Buffer.from('\r\n'));
  for (const [k, v] of Object.entries(fields)) field(k, v);
  if (file) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"`;
    if (file.filename !== undefined) head += `; filename="${file.filename}"`;
    head += `\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`;
    out.push(Buffer.from(head, 'utf8'), Buffer.from(file.data), Buffer.from('\r\n'));
  }
  for (const [k, v] of Object.entries(after)) field(k, v);
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { body: Buffer.concat(out), contentType: `multipart/form-data; boundary=${BOUNDARY}` };
}

/** POSTs a form to `url` (no redirect following); returns status, headers and body text. */
export async function postForm(url: string, form: { body: Buffer; contentType: string }): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, { method: 'POST', body: new Uint8Array(form.body), headers: { 'content-type': form.contentType }, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
