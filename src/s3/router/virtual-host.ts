/**
 * @module Virtual-hosted-style addressing: `<bucket>.<baseDomain>[:port]` names the bucket.
 */

function withoutPort(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h; // IPv6 literal: [::1]:9000
  const colon = h.lastIndexOf(':');
  return (colon < 0 ? h : h.slice(0, colon)).replace(/\.$/, '');
}

/**
 * The bucket named by `host` under `baseDomain` (`photos.s3.example.com` under
 * `s3.example.com` → `photos`), or undefined when there is no base domain, the host is the
 * base domain itself, or it is not under it (requests by IP or another name are then
 * path-style). Ports and a trailing dot are ignored, names compared case-insensitively;
 * the bucket is returned lower-cased (DNS names are case-insensitive). Pure; the bucket name
 * is not validated here.
 */
export function bucketFromHost(
  host: string | undefined,
  baseDomain: string | undefined
): string | undefined {
  if (!host || !baseDomain) return undefined;
  const h = withoutPort(host);
  const base = withoutPort(baseDomain);
  if (base === '' || h === base || !h.endsWith('.' + base)) return undefined;
  return h.slice(0, h.length - base.length - 1);
}
