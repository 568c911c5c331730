"""boto3 driver for test/integration/object-lock-boto3.test.ts.

Runs one Object Lock scenario against a Strata endpoint with two real boto3 clients (an admin
key and a writer key holding only read and write on the bucket) and prints one JSON document
of observations (results and error codes). Nothing is asserted here: the TypeScript test
asserts, so a surprise shows up as a readable diff there.

usage: object_lock_boto3.py '<json config>'
  config: endpoint, bucket, admin [id, secret], writer [id, secret], phase ("create" | "lock")
"""

import base64
import datetime
import hashlib
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def client(endpoint, key, when_required=False):
    opts = {"signature_version": "s3v4", "s3": {"addressing_style": "path"}}
    if when_required:
        opts["request_checksum_calculation"] = "when_required"
        opts["response_checksum_validation"] = "when_required"
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=key[0],
        aws_secret_access_key=key[1],
        region_name="us-east-1",
        config=Config(**opts),
    )


def code_of(fn):
    """Runs fn; returns 'ok' or the S3 error code it failed with."""
    try:
        fn()
        return "ok"
    except ClientError as e:
        return e.response.get("Error", {}).get("Code") or str(
            e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        )


def iso(d):
    return d.astimezone(datetime.timezone.utc).isoformat() if d else None


def main():
    cfg = json.loads(sys.argv[1])
    b = cfg["bucket"]
    admin = client(cfg["endpoint"], cfg["admin"])
    writer = client(cfg["endpoint"], cfg["writer"])
    bare = client(cfg["endpoint"], cfg["admin"], when_required=True)
    out = {"boto3": boto3.__version__}
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)

    if cfg["phase"] == "create":
        # Phase 1: the bucket (the test then grants the writer on it and runs phase 2).
        admin.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        out["versioning"] = admin.get_bucket_versioning(Bucket=b).get("Status")
        out["lock_config"] = admin.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]
        print(json.dumps(out, default=str))
        return

    admin.put_object_lock_configuration(
        Bucket=b,
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}},
        },
    )
    out["lock_config_rule"] = admin.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]

    # COMPLIANCE (the bucket default): removed by nobody; extended, never shortened.
    c = writer.put_object(Bucket=b, Key="c", Body=b"compliance")
    head = admin.head_object(Bucket=b, Key="c")
    out["c_head"] = {
        "mode": head.get("ObjectLockMode"),
        "until_minus_modified_s": (head["ObjectLockRetainUntilDate"] - head["LastModified"]).total_seconds(),
    }
    cv = c["VersionId"]
    out["c_delete_version"] = {
        "admin": code_of(lambda: admin.delete_object(Bucket=b, Key="c", VersionId=cv)),
        "admin_bypass": code_of(
            lambda: admin.delete_object(Bucket=b, Key="c", VersionId=cv, BypassGovernanceRetention=True)
        ),
        "writer_bypass": code_of(
            lambda: writer.delete_object(Bucket=b, Key="c", VersionId=cv, BypassGovernanceRetention=True)
        ),
    }
    marker = writer.delete_object(Bucket=b, Key="c")
    out["c_marker"] = marker.get("DeleteMarker")
    until = admin.get_object_retention(Bucket=b, Key="c", VersionId=cv)["Retention"]["RetainUntilDate"]
    out["c_shorten"] = code_of(
        lambda: admin.put_object_retention(
            Bucket=b,
            Key="c",
            VersionId=cv,
            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)},
            BypassGovernanceRetention=True,
        )
    )
    later = (until + day).replace(microsecond=0)
    out["c_extend"] = code_of(
        lambda: writer.put_object_retention(
            Bucket=b, Key="c", VersionId=cv, Retention={"Mode": "COMPLIANCE", "RetainUntilDate": later}
        )
    )
    out["c_retention"] = iso(
        admin.get_object_retention(Bucket=b, Key="c", VersionId=cv)["Retention"]["RetainUntilDate"]
    )
    out["c_expected"] = iso(later)
    out["c_versions"] = [
        [v["VersionId"] == cv, v["IsLatest"]] for v in admin.list_object_versions(Bucket=b, Prefix="c").get("Versions", [])
    ]

    # GOVERNANCE: only the bypass from a key allowed to bypass (the admin, not the writer).
    g = writer.put_object(
        Bucket=b, Key="g", Body=b"governance", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=now + day
    )
    gv = g["VersionId"]
    out["g_delete_version"] = {
        "admin": code_of(lambda: admin.delete_object(Bucket=b, Key="g", VersionId=gv)),
        "writer_bypass": code_of(
            lambda: writer.delete_object(Bucket=b, Key="g", VersionId=gv, BypassGovernanceRetention=True)
        ),
        "admin_bypass": code_of(
            lambda: admin.delete_object(Bucket=b, Key="g", VersionId=gv, BypassGovernanceRetention=True)
        ),
    }

    # Legal hold: blocks until cleared (by an owner; the writer may not clear it).
    h = writer.put_object(
        Bucket=b,
        Key="h",
        Body=b"held",
        ObjectLockMode="GOVERNANCE",
        ObjectLockRetainUntilDate=now + datetime.timedelta(seconds=2),
        ObjectLockLegalHoldStatus="ON",
    )
    hv = h["VersionId"]
    out["h_delete_held"] = code_of(
        lambda: admin.delete_object(Bucket=b, Key="h", VersionId=hv, BypassGovernanceRetention=True)
    )
    out["h_writer_clears"] = code_of(
        lambda: writer.put_object_legal_hold(Bucket=b, Key="h", VersionId=hv, LegalHold={"Status": "OFF"})
    )
    admin.put_object_legal_hold(Bucket=b, Key="h", VersionId=hv, LegalHold={"Status": "OFF"})
    out["h_legal_hold"] = admin.get_object_legal_hold(Bucket=b, Key="h", VersionId=hv)["LegalHold"]
    out["h_delete_cleared"] = code_of(
        lambda: admin.delete_object(Bucket=b, Key="h", VersionId=hv, BypassGovernanceRetention=True)
    )

    # DeleteObjects: the locked version fails alone; its delete marker goes.
    multi = admin.delete_objects(
        Bucket=b,
        Delete={"Objects": [{"Key": "c", "VersionId": cv}, {"Key": "c", "VersionId": marker["VersionId"]}]},
        BypassGovernanceRetention=True,
    )
    out["multi"] = {
        "deleted": [[d["Key"], d["VersionId"] == marker["VersionId"], d.get("DeleteMarker")] for d in multi.get("Deleted", [])],
        "errors": [[e["Key"], e["VersionId"] == cv, e["Code"]] for e in multi.get("Errors", [])],
    }
    out["c_current_again"] = admin.head_object(Bucket=b, Key="c")["VersionId"] == cv

    # A locked body needs Content-MD5 or a checksum (boto3 sends none when_required).
    out["bare_put"] = code_of(lambda: bare.put_object(Bucket=b, Key="bare", Body=b"bare"))
    md5 = base64.b64encode(hashlib.md5(b"bare").digest()).decode()
    out["bare_put_md5"] = code_of(lambda: bare.put_object(Bucket=b, Key="bare", Body=b"bare", ContentMD5=md5))

    out["suspend"] = code_of(
        lambda: admin.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Suspended"})
    )
    out["delete_bucket"] = code_of(lambda: admin.delete_bucket(Bucket=b))
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
