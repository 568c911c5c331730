/**
 * @module The environment for botocore-based clients (the aws CLI, boto3) under test:
 * the harness's {@link awsEnv} (test credentials, no config files, no IMDS) without the
 * AWS_* settings a developer's shell may carry that would change what goes on the wire —
 * a stray AWS_REQUEST_CHECKSUM_CALCULATION=when_required would quietly turn a "default
 * checksums" run into a when_required one and the test would prove less than it claims.
 */
import { awsEnv } from '../harness.js';

/** Inherited settings that change requests or endpoints; tests set them explicitly if at all. */
const INHERITED_AWS_SETTINGS = [
  'AWS_REQUEST_CHECKSUM_CALCULATION',
  'AWS_RESPONSE_CHECKSUM_VALIDATION',
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_SESSION_TOKEN',
  'AWS_SECURITY_TOKEN',
  'AWS_CA_BUNDLE',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_USE_DUALSTACK_ENDPOINT',
  'AWS_USE_FIPS_ENDPOINT',
  'AWS_S3_US_EAST_1_REGIONAL_ENDPOINT',
  'AWS_MAX_ATTEMPTS',
  'AWS_RETRY_MODE',
];

/** {@link awsEnv} minus inherited request-shaping settings, plus `extra`. Pure. */
export function botocoreEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = awsEnv();
  for (const k of INHERITED_AWS_SETTINGS) delete env[k];
  return { ...env, ...extra };
}
