/** @module aws-chunked request bodies: decoding, chunk/trailer signatures, header options. */
export * from './decoder.js';
export * from './signature.js';
export * from './headers.js';
