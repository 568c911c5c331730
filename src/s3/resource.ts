/**
 * @module The `<Resource>` of an S3 error document when the request was not routed (yet):
 * what the request-target names, the way S3 writes it for routed requests — `/bucket/key`
 * (decoded), `/bucket`, or `/` for the service — also for virtual-hosted-style requests,
 * whose bucket is in the Host header.
 */
import { percentDecode, splitTarget } from '../sigv4/raw-target.js';
import { bucketFromHost } from './router/virtual-host.js';

function decoded(raw: string): string {
  try {
    return percentDecode(raw);
  } catch {
    return raw; // a malformed escape: name it as it was sent
  }
}

/** `/bucket/key`, `/bucket` or `/` for a raw request-target. Pure; never throws. */
export function resourceOfTarget(rawTarget: string, host: string | undefined, baseDomain: string | undefined): string {
  const path = decoded(splitTarget(rawTarget).rawPath);
  const vhost = bucketFromHost(host, baseDomain);
  if (vhost !== undefined) return path === '/' ? `/${vhost}` : `/${vhost}${path}`;
  // Path-style: "/bucket/" names the bucket as "/bucket" does.
  return /^\/[^/]+\/$/.test(path) ? path.slice(0, -1) : path;
}
