"""boto3 driver for test/integration/sse-clients.test.ts: SSE-S3 and SSE-C through boto3's own
helpers (it base64-encodes the customer key and adds its MD5), including s3transfer's
multipart upload and ranged download. Prints one JSON document of observations; the
TypeScript test asserts them.

usage: sse_boto3_client.py '<json config>'
  config: endpoint, bucket, key_a / key_b (32-byte keys as hex), big_file, out_dir
"""

import hashlib
import json
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

MiB = 1024 * 1024
SEG = 256 * 1024


def md5(b):
    return hashlib.md5(b).hexdigest()


def error_of(fn):
    try:
        fn()
    except ClientError as e:
        return {"code": e.response.get("Error", {}).get("Code"), "status": e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")}
    return {"code": None, "status": None}


def main():
    cfg = json.loads(sys.argv[1])
    bucket = cfg["bucket"]
    key_a = bytes.fromhex(cfg["key_a"])
    key_b = bytes.fromhex(cfg["key_b"])
    s3 = boto3.client(
        "s3",
        endpoint_url=cfg["endpoint"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    ca = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key_a}
    cb = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key_b}
    out = {}
    s3.create_bucket(Bucket=bucket)

    small = os.urandom(1000)
    mid = os.urandom(MiB + 5)
    put = s3.put_object(Bucket=bucket, Key="c/small", Body=small, **ca)
    s3.put_object(Bucket=bucket, Key="c/mid", Body=mid, **ca)
    s3.put_object(Bucket=bucket, Key="s3/mid", Body=mid, ServerSideEncryption="AES256")
    head = s3.head_object(Bucket=bucket, Key="c/mid", **ca)
    out["put"] = {"alg": put.get("SSECustomerAlgorithm"), "key_md5": put.get("SSECustomerKeyMD5"), "etag": put["ETag"].strip('"'), "small_md5": md5(small)}
    out["head"] = {"length": head["ContentLength"], "key_md5": head.get("SSECustomerKeyMD5")}
    out["get"] = {
        "small": md5(s3.get_object(Bucket=bucket, Key="c/small", **ca)["Body"].read()) == md5(small),
        "mid": md5(s3.get_object(Bucket=bucket, Key="c/mid", **ca)["Body"].read()) == md5(mid),
        "s3": s3.get_object(Bucket=bucket, Key="s3/mid")["ServerSideEncryption"],
    }
    ranges = []
    for a, b in [(SEG - 1, SEG), (0, SEG), (SEG - 10, 3 * SEG + 10), (MiB, MiB + 4)]:
        got = s3.get_object(Bucket=bucket, Key="c/mid", Range="bytes=%d-%d" % (a, b), **ca)["Body"].read()
        ranges.append(got == mid[a : b + 1])
    out["ranges"] = ranges
    out["no_key"] = error_of(lambda: s3.get_object(Bucket=bucket, Key="c/mid"))
    out["wrong_key"] = error_of(lambda: s3.get_object(Bucket=bucket, Key="c/mid", **cb))
    out["head_wrong_key"] = error_of(lambda: s3.head_object(Bucket=bucket, Key="c/mid", **cb))

    # s3transfer: multipart upload (SSE-C on Create and every UploadPart) and ranged download.
    tc = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=2)
    s3.upload_file(cfg["big_file"], bucket, "c/big", ExtraArgs=dict(ca), Config=tc)
    down = os.path.join(cfg["out_dir"], "big.down")
    s3.download_file(bucket, "c/big", down, ExtraArgs=dict(ca), Config=tc)
    with open(down, "rb") as f:
        out["big_md5"] = md5(f.read())
    out["big_parts"] = s3.head_object(Bucket=bucket, Key="c/big", PartNumber=1, **ca).get("PartsCount")

    # Copies between modes, with boto3's CopySourceSSECustomer* helpers.
    s3.copy_object(Bucket=bucket, Key="copy/c2s3", CopySource={"Bucket": bucket, "Key": "c/mid"}, CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=key_a, ServerSideEncryption="AES256")
    s3.copy_object(Bucket=bucket, Key="copy/c2c", CopySource={"Bucket": bucket, "Key": "c/small"}, CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=key_a, **cb)
    out["copies"] = {
        "c2s3": md5(s3.get_object(Bucket=bucket, Key="copy/c2s3")["Body"].read()) == md5(mid),
        "c2c": md5(s3.get_object(Bucket=bucket, Key="copy/c2c", **cb)["Body"].read()) == md5(small),
        "c2c_old_key": error_of(lambda: s3.get_object(Bucket=bucket, Key="copy/c2c", **ca)),
        "no_source_key": error_of(lambda: s3.copy_object(Bucket=bucket, Key="copy/x", CopySource={"Bucket": bucket, "Key": "c/small"})),
    }

    # Bucket default encryption.
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    d = s3.put_object(Bucket=bucket, Key="default/a", Body=b"x" * 100)
    rules = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    out["default"] = {"put": d.get("ServerSideEncryption"), "algorithm": rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"]}
    s3.delete_bucket_encryption(Bucket=bucket)
    out["default"]["after_delete"] = error_of(lambda: s3.get_bucket_encryption(Bucket=bucket))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
