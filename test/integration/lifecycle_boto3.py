"""boto3 driver for test/integration/lifecycle-boto3.test.ts.

Runs a lifecycle scenario against a Strata endpoint whose lifecycle day is short (the server's
STRATA_LIFECYCLE_DAY_MS) with a real boto3 client, and prints one JSON document of what it
observed (results, headers and error codes). Nothing is asserted here: the TypeScript test
asserts, so a surprise shows up as a readable diff there.

usage: lifecycle_boto3.py '<json config>'
  config: endpoint, key [id, secret], bucket
"""

import json
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def client(endpoint, key):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=key[0],
        aws_secret_access_key=key[1],
        region_name="us-east-1",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )


def code_of(fn):
    """Runs fn; returns 'ok' or '<status> <code>' of the S3 error it failed with."""
    try:
        fn()
        return "ok"
    except ClientError as e:
        return "%s %s" % (
            e.response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
            e.response.get("Error", {}).get("Code"),
        )


def main():
    cfg = json.loads(sys.argv[1])
    s3 = client(cfg["endpoint"], cfg["key"])
    b = cfg["bucket"]
    out = {}
    s3.create_bucket(Bucket=b)
    put = lambda rules, bucket=b: s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})

    rules = [
        {"ID": "legacy", "Prefix": "logs/", "Status": "Enabled", "Expiration": {"Days": 31}},
        {"ID": "and", "Filter": {"And": {"Prefix": "p/", "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}}, "Status": "Enabled", "Expiration": {"Days": 2}},
        {"ID": "nc", "Filter": {"Prefix": ""}, "Status": "Disabled", "NoncurrentVersionExpiration": {"NoncurrentDays": 4}},
        {"ID": "mp", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 3}},
    ]
    out["put"] = put(rules)["ResponseMetadata"]["HTTPStatusCode"]
    out["rules_back"] = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    out["rules_sent"] = rules
    no_id = [{"Prefix": "x/", "Status": "Enabled", "Expiration": {"Days": 1}}]
    put(no_id)
    out["made_up_id"] = "ID" in s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"][0]

    out["errors"] = {
        "days0": code_of(lambda: put([{"ID": "a", "Prefix": "", "Status": "Enabled", "Expiration": {"Days": 0}}])),
        "status_lower": code_of(lambda: put([{"ID": "a", "Prefix": "", "Status": "enabled", "Expiration": {"Days": 1}}])),
        "same_id": code_of(lambda: put([
            {"ID": "a", "Prefix": "a", "Status": "Enabled", "Expiration": {"Days": 1}},
            {"ID": "a", "Prefix": "b", "Status": "Enabled", "Expiration": {"Days": 1}},
        ])),
        "id_too_long": code_of(lambda: put([{"ID": "a" * 256, "Prefix": "", "Status": "Enabled", "Expiration": {"Days": 1}}])),
        # botocore reads "20200101" as epoch seconds: not at midnight.
        "bad_date": code_of(lambda: put([{"ID": "a", "Prefix": "", "Status": "Enabled", "Expiration": {"Date": "20200101"}}])),
        "transition": code_of(lambda: put([{"ID": "a", "Prefix": "", "Status": "Enabled", "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]}])),
    }

    # x-amz-expiration with a tag filter: only objects carrying every tag.
    put([{"ID": "tagged", "Filter": {"Tag": {"Key": "k", "Value": "v"}}, "Status": "Enabled", "Expiration": {"Days": 1}}])
    s3.put_object(Bucket=b, Key="t1", Body=b"x", Tagging="k=v")
    s3.put_object(Bucket=b, Key="t2", Body=b"x", Tagging="k=w")
    out["header_tagged"] = s3.head_object(Bucket=b, Key="t1")["ResponseMetadata"]["HTTPHeaders"].get("x-amz-expiration")
    out["header_untagged"] = s3.head_object(Bucket=b, Key="t2")["ResponseMetadata"]["HTTPHeaders"].get("x-amz-expiration")

    # The worker: a lone delete marker goes once its noncurrent version has gone.
    vb = b + "-v"
    s3.create_bucket(Bucket=vb)
    s3.put_bucket_versioning(Bucket=vb, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=vb, Key="k", Body=b"one")
    s3.delete_object(Bucket=vb, Key="k")
    put([
        {"Expiration": {"ExpiredObjectDeleteMarker": True}, "ID": "dm", "Prefix": "", "Status": "Enabled"},
        {"ID": "nc", "Prefix": "", "Status": "Enabled", "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
    ], vb)
    deadline = time.time() + 20
    while time.time() < deadline:
        v = s3.list_object_versions(Bucket=vb)
        if not v.get("Versions") and not v.get("DeleteMarkers"):
            break
        time.sleep(0.2)
    v = s3.list_object_versions(Bucket=vb)
    out["versions_left"] = len(v.get("Versions", [])) + len(v.get("DeleteMarkers", []))
    try:
        s3.head_object(Bucket=vb, Key="k")
        out["head_after"] = "found"
    except ClientError as e:
        out["head_after"] = e.response["ResponseMetadata"]["HTTPStatusCode"]

    out["delete"] = s3.delete_bucket_lifecycle(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"]
    out["get_after_delete"] = code_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=b))
    print(json.dumps(out))


main()
