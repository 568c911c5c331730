/**
 * @module Bucket default encryption (Put/Get/DeleteBucketEncryption): the
 * `ServerSideEncryptionConfiguration` document and its stored form.
 *
 *   <ServerSideEncryptionConfiguration>
 *     <Rule>                                   exactly one
 *       <ApplyServerSideEncryptionByDefault>
 *         <SSEAlgorithm>AES256</SSEAlgorithm>  aws:kms / aws:kms:dsse: 501, not implemented
 *       </ApplyServerSideEncryptionByDefault>
 *       <BucketKeyEnabled>false</BucketKeyEnabled>   optional, kept and echoed
 *     </Rule>
 *   </ServerSideEncryptionConfiguration>
 *
 * Stored as the bucket configuration `encryption` (JSON `{"algorithm":"AES256",
 * "bucketKeyEnabled":false}`); writes without SSE headers then use SSE-S3.
 */
import type { RequestContext } from './context.js';
import { S3Error } from './errors.js';
import { el, leaf, s3Root, xmlDocument } from './xml/build.js';
import { malformedXml } from './xml/parse.js';
import { booleanLeaf, childrenNamed, leafText, parseRoot } from './xml/read.js';

/** The bucket configuration name the default encryption is stored under. */
export const ENCRYPTION_CONFIG = 'encryption';

export interface BucketEncryption {
  algorithm: 'AES256';
  bucketKeyEnabled: boolean;
}

/**
 * Parses a PutBucketEncryption body. Pure. Throws S3Error MalformedXML (not exactly one
 * rule, no default, no algorithm, KMSMasterKeyID with AES256), InvalidArgument (an unknown
 * algorithm) or NotImplemented (aws:kms, aws:kms:dsse).
 */
export function parseBucketEncryption(body: Uint8Array | string): BucketEncryption {
  const root = parseRoot(body, 'ServerSideEncryptionConfiguration');
  const rules = childrenNamed(root, 'Rule');
  if (rules.length !== 1) throw malformedXml(`expected one <Rule>, got ${rules.length}`);
  const rule = rules[0]!;
  const defaults = childrenNamed(rule, 'ApplyServerSideEncryptionByDefault');
  if (defaults.length !== 1) throw malformedXml('a <Rule> needs one <ApplyServerSideEncryptionByDefault>');
  const algorithm = leafText(defaults[0]!, 'SSEAlgorithm')?.trim();
  if (algorithm === undefined) throw malformedXml('<ApplyServerSideEncryptionByDefault> lacks <SSEAlgorithm>');
  if (algorithm === 'aws:kms' || algorithm === 'aws:kms:dsse') {
    throw new S3Error('NotImplemented', `Default encryption with AWS KMS keys (${algorithm}) is not implemented; use AES256.`);
  }
  if (algorithm !== 'AES256') {
    throw new S3Error('InvalidArgument', 'The encryption method specified is not supported', {
      ArgumentName: 'SSEAlgorithm',
      ArgumentValue: algorithm.slice(0, 64),
    });
  }
  if (leafText(defaults[0]!, 'KMSMasterKeyID') !== undefined) {
    throw new S3Error('InvalidArgument', 'a KMSMasterKeyID is allowed only with SSEAlgorithm aws:kms', { ArgumentName: 'KMSMasterKeyID' });
  }
  return { algorithm, bucketKeyEnabled: booleanLeaf(rule, 'BucketKeyEnabled', false) };
}

/** The GetBucketEncryption document. Pure. */
export function renderBucketEncryption(c: BucketEncryption): string {
  return xmlDocument(
    s3Root(
      'ServerSideEncryptionConfiguration',
      el(
        'Rule',
        el('ApplyServerSideEncryptionByDefault', leaf('SSEAlgorithm', c.algorithm)),
        leaf('BucketKeyEnabled', c.bucketKeyEnabled)
      )
    )
  );
}

export function encodeBucketEncryption(c: BucketEncryption): Uint8Array {
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, bucketKeyEnabled: c.bucketKeyEnabled }));
}

/** The stored configuration; throws InternalError-bound Error when it does not parse (never silently plaintext). */
export function decodeBucketEncryption(raw: Uint8Array): BucketEncryption {
  const v = JSON.parse(Buffer.from(raw).toString('utf8')) as Partial<BucketEncryption>;
  if (v.algorithm !== 'AES256') throw new Error(`bucket encryption configuration names ${String(v.algorithm)}`);
  return { algorithm: 'AES256', bucketKeyEnabled: v.bucketKeyEnabled === true };
}

/** The bucket's default encryption, or undefined. Throws NoSuchBucket (store) for a missing bucket. */
export function bucketDefaultEncryption(r: RequestContext, bucket: string): BucketEncryption | undefined {
  const raw = r.store.getBucketConfig(bucket, ENCRYPTION_CONFIG);
  return raw ? decodeBucketEncryption(raw) : undefined;
}
