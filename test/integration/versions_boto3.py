"""boto3 driver for test/integration/versions-clients.test.ts: S3 versioning as a backup tool
or an operator uses it, with a real boto3 client.

Enables versioning, writes three versions of one key (the last as a multipart upload) and
deletes another key, then lists versions with boto3's paginator in pages of 2, reads each
version by id, restores the oldest version by copying it over the key, undeletes the other
key by deleting its delete marker, and empties the bucket version by version (DeleteObjects
with VersionId, as the conformance suite's strict cleanup does) before deleting it. Prints one
JSON document of observations; the TypeScript test asserts them.

usage: versions_boto3.py '<json config>'   config: endpoint, bucket
"""

import hashlib
import io
import json
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

MiB = 1024 * 1024


def md5(b):
    return hashlib.md5(b).hexdigest()


def error_of(fn):
    """Runs fn, which should fail; the S3 error code, HTTP status and x-amz-delete-marker."""
    try:
        fn()
    except ClientError as e:
        headers = e.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        return {
            "code": e.response.get("Error", {}).get("Code"),
            "status": e.response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
            "delete_marker": headers.get("x-amz-delete-marker"),
        }
    return {"code": None, "status": None, "delete_marker": None}


def listing(s3, bucket):
    """Every version and marker, through the paginator in pages of 2, in listing order."""
    out = []
    pages = 0
    for page in s3.get_paginator("list_object_versions").paginate(
        Bucket=bucket, PaginationConfig={"PageSize": 2}
    ):
        pages += 1
        # boto3 splits versions and markers; the test compares sets per key, and order
        # within each kind.
        for v in page.get("Versions", []):
            out.append({"kind": "version", "key": v["Key"], "id": v["VersionId"], "latest": v["IsLatest"], "etag": v["ETag"], "size": v["Size"]})
        for m in page.get("DeleteMarkers", []):
            out.append({"kind": "marker", "key": m["Key"], "id": m["VersionId"], "latest": m["IsLatest"]})
    return out, pages


def main():
    cfg = json.loads(sys.argv[1])
    endpoint, bucket = cfg["endpoint"], cfg["bucket"]
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    obs = {"boto3": boto3.__version__}
    s3.create_bucket(Bucket=bucket)
    obs["versioning_before"] = s3.get_bucket_versioning(Bucket=bucket).get("Status")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    obs["versioning_after"] = s3.get_bucket_versioning(Bucket=bucket).get("Status")

    key, other = "db/backup.bin", "db/other.txt"
    bodies = [b"first version\n", b"second version, longer\n"]
    ids = []
    for b in bodies:
        ids.append(s3.put_object(Bucket=bucket, Key=key, Body=b)["VersionId"])
    # The third version through the transfer manager: a 2-part multipart upload.
    big = bytes((i * 7 + 3) % 251 for i in range(5 * MiB + 1000))
    bodies.append(big)
    s3.upload_fileobj(
        io.BytesIO(big), bucket, key,
        Config=TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB),
    )
    ids.append(s3.head_object(Bucket=bucket, Key=key)["VersionId"])
    obs["ids"] = ids
    obs["bodies_md5"] = [md5(b) for b in bodies]

    other_id = s3.put_object(Bucket=bucket, Key=other, Body=b"other\n")["VersionId"]
    d = s3.delete_object(Bucket=bucket, Key=other)
    obs["other"] = {"id": other_id, "marker": d.get("DeleteMarker"), "marker_id": d.get("VersionId")}
    obs["get_deleted"] = error_of(lambda: s3.get_object(Bucket=bucket, Key=other))
    obs["get_marker"] = error_of(lambda: s3.get_object(Bucket=bucket, Key=other, VersionId=d["VersionId"]))

    obs["listing"], obs["pages"] = listing(s3, bucket)
    obs["reads"] = [
        md5(s3.get_object(Bucket=bucket, Key=key, VersionId=i)["Body"].read()) for i in ids
    ]
    obs["latest"] = md5(s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    # Restore the oldest version: copy it over the key (a new, fourth version).
    r = s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key, "VersionId": ids[0]})
    obs["restore"] = {"id": r.get("VersionId"), "source": r.get("CopySourceVersionId")}
    obs["restored"] = md5(s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    # Undelete: remove the delete marker.
    u = s3.delete_object(Bucket=bucket, Key=other, VersionId=d["VersionId"])
    obs["undelete"] = {"marker": u.get("DeleteMarker"), "id": u.get("VersionId")}
    obs["undeleted"] = s3.get_object(Bucket=bucket, Key=other)["Body"].read().decode()

    obs["listing_after"], _ = listing(s3, bucket)

    # Strict cleanup: every version and marker by id, in batches, then the bucket.
    deleted = 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, PaginationConfig={"PageSize": 3}):
        objs = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if objs:
            res = s3.delete_objects(Bucket=bucket, Delete={"Objects": objs, "Quiet": False})
            deleted += len(res.get("Deleted", []))
            if res.get("Errors"):
                obs["cleanup_errors"] = res["Errors"]
    obs["cleanup_deleted"] = deleted
    obs["left"], _ = listing(s3, bucket)
    s3.delete_bucket(Bucket=bucket)
    obs["bucket_gone"] = error_of(lambda: s3.head_bucket(Bucket=bucket))
    print(json.dumps(obs))


if __name__ == "__main__":
    main()
