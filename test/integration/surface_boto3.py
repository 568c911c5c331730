"""boto3 driver for test/integration/surface-boto3.test.ts.

Runs the S3-surface scenarios with a real boto3 client (SigV4, path-style) and prints one
JSON document of observations; every assertion is on the TypeScript side.

usage: surface_boto3.py '<json config>'   config: endpoint, bucket
"""

import base64
import hashlib
import json
import sys
import urllib.error
import urllib.request

import uuid

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


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


def http_status(url, method="GET", data=None):
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req) as r:
            return {"status": r.status, "body": r.read().decode("utf-8", "replace")}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode("utf-8", "replace")}


def post_form(url, fields, filename, data):
    """POSTs a multipart/form-data form (fields in order, then the file) as a browser would."""
    boundary = "----surface" + uuid.uuid4().hex
    parts = []
    for k, v in fields.items():
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, k, v)).encode())
    parts.append(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n\r\n" % (boundary, filename)).encode())
    body = b"".join(parts) + data + ("\r\n--%s--\r\n" % boundary).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def main():
    cfg = json.loads(sys.argv[1])
    bucket = cfg["bucket"]
    s3 = boto3.client(
        "s3",
        endpoint_url=cfg["endpoint"],
        config=Config(s3={"addressing_style": "path"}, signature_version="s3v4", retries={"max_attempts": 1}),
    )
    out = {"boto3": boto3.__version__}
    s3.create_bucket(Bucket=bucket)

    # Presigned POST (SigV4 fields), posted as a multipart form.
    post = s3.generate_presigned_post(
        bucket,
        "forms/${filename}",
        Fields={"Content-Type": "text/plain", "x-amz-meta-origin": "boto3"},
        Conditions=[["starts-with", "$key", "forms/"], {"Content-Type": "text/plain"}, {"x-amz-meta-origin": "boto3"}, ["content-length-range", 1, 1024]],
        ExpiresIn=300,
    )
    status, _ = post_form(post["url"], post["fields"], "note.txt", b"posted by boto3")
    got = s3.get_object(Bucket=bucket, Key="forms/note.txt")
    out["post"] = {
        "status": status,
        "fields": sorted(post["fields"].keys()),
        "body": got["Body"].read().decode(),
        "type": got["ContentType"],
        "meta": got["Metadata"],
    }
    big_status, big_text = post_form(post["url"], post["fields"], "big.txt", b"x" * 2000)
    out["post_too_large"] = {"status": big_status, "code": big_text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in big_text else None}

    # Non-ASCII user metadata: botocore sends UTF-8 header bytes and signs them.
    def set_meta(**kwargs):
        kwargs["params"]["headers"]["x-amz-meta-meta1"] = "Hello World\xe9"

    s3.meta.events.register("before-call.s3.PutObject", set_meta)
    s3.put_object(Bucket=bucket, Key="unicode", Body=b"bar")
    s3.meta.events.unregister("before-call.s3.PutObject", set_meta)
    out["unicode_meta"] = s3.get_object(Bucket=bucket, Key="unicode")["Metadata"]["meta1"]

    # Plain chunked transfer encoding (no Content-Length).
    def add_te(request, **kwargs):
        request.headers.add_header("Transfer-Encoding", "chunked")

    s3.meta.events.register_first("before-sign.s3.PutObject", add_te)
    te = s3.put_object(Bucket=bucket, Key="chunked", Body=b"chunked body")
    s3.meta.events.unregister("before-sign.s3.PutObject", add_te)
    out["chunked"] = {"status": te["ResponseMetadata"]["HTTPStatusCode"], "body": s3.get_object(Bucket=bucket, Key="chunked")["Body"].read().decode()}

    # Conditional writes.
    etag = s3.put_object(Bucket=bucket, Key="cond", Body=b"one", IfNoneMatch="*")["ETag"]
    out["cond"] = {
        "star_again": error_of(lambda: s3.put_object(Bucket=bucket, Key="cond", Body=b"two", IfNoneMatch="*")),
        "etag_match": error_of(lambda: s3.put_object(Bucket=bucket, Key="cond", Body=b"two", IfNoneMatch=etag)),
        "etag_other": s3.put_object(Bucket=bucket, Key="cond", Body=b"three", IfNoneMatch='"0123"')["ResponseMetadata"]["HTTPStatusCode"],
        "if_match_star_missing": error_of(lambda: s3.put_object(Bucket=bucket, Key="cond-missing", Body=b"x", IfMatch="*")),
    }

    # GetObjectAttributes of a single PUT with a checksum.
    body = b"A" * 1024
    sha = base64.b64encode(hashlib.sha256(body).digest()).decode()
    s3.put_object(Bucket=bucket, Key="attrs", Body=body, ChecksumAlgorithm="SHA256")
    a = s3.get_object_attributes(Bucket=bucket, Key="attrs", ObjectAttributes=["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"])
    out["attributes"] = {
        "etag": a.get("ETag"),
        "checksum": a.get("Checksum"),
        "size": a.get("ObjectSize"),
        "class": a.get("StorageClass"),
        "parts": a.get("ObjectParts"),
        "sha": sha,
        "md5": hashlib.md5(body).hexdigest(),
    }

    # A wrong x-amz-checksum-* value.
    out["bad_checksum"] = error_of(lambda: s3.put_object(Bucket=bucket, Key="bad", Body=body, ChecksumAlgorithm="SHA256", ChecksumSHA256="bad"))

    # Presigned URLs out of range.
    s3.put_object(Bucket=bucket, Key="signed", Body=b"signed")
    out["presigned"] = {}
    for name, expires in [("zero", 0), ("negative", -7), ("over_week", 609901), ("ok", 60)]:
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "signed"}, ExpiresIn=expires)
        out["presigned"][name] = http_status(url)["status"]
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "signed"}, ExpiresIn=-1000, HttpMethod="PUT")
    out["presigned"]["put_expired"] = http_status(put_url, "PUT", b"x")["status"]

    # ListBuckets pages.
    for i in range(3):
        s3.create_bucket(Bucket="%s-page-%d" % (bucket, i))
    pages = []
    token = None
    while True:
        kw = {"MaxBuckets": 2, "Prefix": bucket + "-page-"}
        if token:
            kw["ContinuationToken"] = token
        resp = s3.list_buckets(**kw)
        pages.append({"names": [b["Name"] for b in resp["Buckets"]], "prefix": resp.get("Prefix"), "token": bool(resp.get("ContinuationToken"))})
        token = resp.get("ContinuationToken")
        if not token:
            break
    out["list_buckets"] = pages
    out["list_buckets_bad_token"] = error_of(lambda: s3.list_buckets(MaxBuckets=1, ContinuationToken="bogus"))

    print(json.dumps(out))


main()
