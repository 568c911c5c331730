"""boto3 driver for test/integration/boto3.test.ts.

Runs one scenario against a Strata endpoint with a real boto3 client and prints one JSON
document of observations (results, error codes, and the headers botocore put on the wire);
the TypeScript test asserts them. Nothing is asserted here, so a surprise shows up as a
readable diff on the TypeScript side instead of a Python traceback.

usage: boto3_client.py '<json config>'
  config: endpoint, bucket, mode ("default" | "when_required"), big_file (path to the
  multipart test body)
"""

import hashlib
import io
import json
import sys
import urllib.error
import urllib.request

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

MiB = 1024 * 1024
# S3's smallest non-last part; s3transfer cuts the upload into parts of this size.
PART = 5 * MiB


def md5(b):
    return hashlib.md5(b).hexdigest()


def error_of(fn):
    """Runs fn, which should fail; returns the S3 error code and HTTP status it got."""
    try:
        fn()
    except ClientError as e:
        return {
            "code": e.response.get("Error", {}).get("Code"),
            "status": e.response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
        }
    return {"code": None, "status": None}


def main():
    cfg = json.loads(sys.argv[1])
    endpoint, bucket, mode = cfg["endpoint"], cfg["bucket"], cfg["mode"]
    opts = {"signature_version": "s3v4", "s3": {"addressing_style": "path"}}
    if mode == "when_required":
        opts["request_checksum_calculation"] = "when_required"
        opts["response_checksum_validation"] = "when_required"
    s3 = boto3.client("s3", endpoint_url=endpoint, config=Config(**opts))

    # What botocore sent, per operation (the last request of each operation wins), plus
    # every request of the transfer-manager operations.
    sent = {}
    sent_all = []

    def record(request, **kwargs):
        op = kwargs.get("event_name", "").split(".")[-1]
        headers = {k.lower(): (v.decode() if isinstance(v, bytes) else str(v)) for k, v in request.headers.items()}
        sent[op] = headers
        sent_all.append({"op": op, "method": request.method, "url": request.url, "headers": headers})

    s3.meta.events.register("before-send.s3.*", record)
    out = {"mode": mode, "boto3": boto3.__version__}

    # Buckets.
    s3.create_bucket(Bucket=bucket)
    out["create_again"] = error_of(lambda: s3.create_bucket(Bucket=bucket))
    out["list_buckets"] = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    out["head_bucket"] = s3.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"]

    # Small objects: put / get / head.
    key = "dir/hello world+ü.txt"
    body = "héllo from boto3\n".encode()
    put = s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="text/plain; charset=utf-8", Metadata={"origin": "boto3"})
    out["put"] = {"etag": put["ETag"], "crc32": put.get("ChecksumCRC32"), "sent": sent["PutObject"]}
    g = s3.get_object(Bucket=bucket, Key=key)
    data = g["Body"].read()
    out["get"] = {
        "md5": md5(data),
        "length": len(data),
        "content_type": g["ContentType"],
        "metadata": g["Metadata"],
        "etag": g["ETag"],
        "sent": sent["GetObject"],
    }
    h = s3.head_object(Bucket=bucket, Key=key)
    out["head"] = {"length": h["ContentLength"], "etag": h["ETag"]}
    out["head_missing"] = error_of(lambda: s3.head_object(Bucket=bucket, Key="missing"))
    out["get_missing"] = error_of(lambda: s3.get_object(Bucket=bucket, Key="missing"))
    out["get_missing_bucket"] = error_of(lambda: s3.get_object(Bucket="boto3-no-such-bucket", Key="k"))

    # Explicit checksum algorithm, validated back with ChecksumMode.
    sums = bytes(range(256)) * 100
    ps = s3.put_object(Bucket=bucket, Key="sums", Body=sums, ChecksumAlgorithm="SHA256")
    gs = s3.get_object(Bucket=bucket, Key="sums", ChecksumMode="ENABLED")
    out["checksum"] = {
        "put_sha256": ps.get("ChecksumSHA256"),
        "get_sha256": gs.get("ChecksumSHA256"),
        "md5": md5(gs["Body"].read()),
    }
    out["bad_checksum"] = error_of(
        lambda: s3.put_object(Bucket=bucket, Key="bad", Body=b"abc", ChecksumCRC32="AAAAAA==")
    )

    # Range.
    gr = s3.get_object(Bucket=bucket, Key="sums", Range="bytes=100-355")
    out["range"] = {"content_range": gr["ContentRange"], "md5": md5(gr["Body"].read()), "status": gr["ResponseMetadata"]["HTTPStatusCode"]}

    # Listing.
    for k in ["l/a", "l/b c", "l/d+e", "l/sub/f", "l/ü"]:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    lv2 = s3.list_objects_v2(Bucket=bucket, Prefix="l/", Delimiter="/")
    out["list_v2"] = {
        "keys": [c["Key"] for c in lv2.get("Contents", [])],
        "prefixes": [p["Prefix"] for p in lv2.get("CommonPrefixes", [])],
        "key_count": lv2["KeyCount"],
    }
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="l/", PaginationConfig={"PageSize": 2})
    out["list_v2_paged"] = [c["Key"] for p in pages for c in p.get("Contents", [])]
    pages = s3.get_paginator("list_objects").paginate(Bucket=bucket, Prefix="l/", PaginationConfig={"PageSize": 2})
    out["list_v1_paged"] = [c["Key"] for p in pages for c in p.get("Contents", [])]

    # Copy.
    cp = s3.copy_object(Bucket=bucket, Key="copied", CopySource={"Bucket": bucket, "Key": key})
    hc = s3.head_object(Bucket=bucket, Key="copied")
    s3.copy_object(
        Bucket=bucket,
        Key="replaced",
        CopySource={"Bucket": bucket, "Key": key},
        MetadataDirective="REPLACE",
        ContentType="application/x-replaced",
        Metadata={"new": "1"},
    )
    hr = s3.head_object(Bucket=bucket, Key="replaced")
    out["copy"] = {
        "etag": cp["CopyObjectResult"]["ETag"],
        "copied_metadata": hc["Metadata"],
        "copied_type": hc["ContentType"],
        "replaced_metadata": hr["Metadata"],
        "replaced_type": hr["ContentType"],
        "md5": md5(s3.get_object(Bucket=bucket, Key="replaced")["Body"].read()),
    }

    # Multipart through the transfer manager: upload_fileobj / download_fileobj.
    tc = TransferConfig(multipart_threshold=PART, multipart_chunksize=PART, max_concurrency=4)
    mark = len(sent_all)
    with open(cfg["big_file"], "rb") as f:
        s3.upload_fileobj(f, bucket, "big.bin", Config=tc)
    up_reqs = sent_all[mark:]
    hb = s3.head_object(Bucket=bucket, Key="big.bin")
    mark = len(sent_all)
    buf = io.BytesIO()
    s3.download_fileobj(bucket, "big.bin", buf, Config=tc)
    down_reqs = sent_all[mark:]
    # Managed copy: above the threshold s3transfer copies server-side, part by part.
    mark = len(sent_all)
    s3.copy({"Bucket": bucket, "Key": "big.bin"}, bucket, "big copy.bin", Config=tc)
    copy_reqs = sent_all[mark:]
    hcp = s3.head_object(Bucket=bucket, Key="big copy.bin")
    ranged = s3.get_object(Bucket=bucket, Key="big copy.bin", Range="bytes=%d-%d" % (PART - 100, PART + 99))
    out["multipart_copy"] = {
        "ops": [r["op"] for r in copy_reqs],
        "copy_ranges": sorted(
            r["headers"].get("x-amz-copy-source-range") for r in copy_reqs if r["op"] == "UploadPartCopy"
        ),
        "etag": hcp["ETag"],
        "length": hcp["ContentLength"],
        "slice_md5": md5(ranged["Body"].read()),
    }
    out["multipart"] = {
        "etag": hb["ETag"],
        "length": hb["ContentLength"],
        "upload_ops": [r["op"] for r in up_reqs],
        "part_checksum_headers": sorted(
            {h for r in up_reqs if r["op"] == "UploadPart" for h in r["headers"] if h.startswith("x-amz-checksum-")}
        ),
        "download_ranges": [r["headers"].get("range") for r in down_reqs if r["op"] == "GetObject"],
        "download_md5": md5(buf.getvalue()),
        "download_length": len(buf.getvalue()),
    }

    # Presigned GETs: boto3's default for S3 presigning (SigV2 query auth) and s3v4.
    presigned = {}
    for name, sig in [("default", None), ("s3v4", "s3v4")]:
        popts = {"s3": {"addressing_style": "path"}}
        if sig:
            popts["signature_version"] = sig
        pc = boto3.client("s3", endpoint_url=endpoint, config=Config(**popts))
        url = pc.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=300)
        try:
            with urllib.request.urlopen(url) as r:
                presigned[name] = {"url": url, "status": r.status, "md5": md5(r.read())}
        except urllib.error.HTTPError as e:
            presigned[name] = {"url": url, "status": e.code, "body": e.read().decode(errors="replace")}
    out["presigned"] = presigned

    # DeleteObjects.
    keys = ["l/a", "l/b c", "l/d+e", "l/sub/f", "l/ü", "never-existed"]
    d = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
    out["delete_objects"] = {
        "deleted": sorted(x["Key"] for x in d.get("Deleted", [])),
        "errors": d.get("Errors", []),
        "sent": sent["DeleteObjects"],
        "left": s3.list_objects_v2(Bucket=bucket, Prefix="l/")["KeyCount"],
    }
    s3.delete_object(Bucket=bucket, Key=key)
    out["deleted_head"] = error_of(lambda: s3.head_object(Bucket=bucket, Key=key))

    print(json.dumps(out))


if __name__ == "__main__":
    main()
