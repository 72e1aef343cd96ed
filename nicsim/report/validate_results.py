#!/usr/bin/env python3
"""Validates nicsim results documents against docs/results.schema.json (JSON Schema 2020-12).

  validate_results.py --schema docs/results.schema.json results.json ...
  validate_results.py --schema docs/results.schema.json --generator build/.../report_schema_sample

With --generator (the CTest test report_schema_validation), the program's valid samples
("full", "minimal", "legacy", "network") must validate and each invalid sample must be rejected for the expected
reason, so the test fails if the schema is too strict or too loose.

Needs Debian's python3-jsonschema (installed by scripts/setup.sh).
"""

import argparse
import json
import subprocess
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit("validate_results.py: python3-jsonschema is missing (run scripts/setup.sh)")

VALID_SAMPLES = ["full", "minimal", "legacy", "network"]
# Invalid sample -> text expected in the rejection (the offending path or keyword).
INVALID_SAMPLES = {
    "bad-backend": "'ns3' is not one of ['sim', 'emu', 'live']",
    "bad-direction": "'b-a' was unexpected",
    "stats-null-with-count": "None is not of type 'number'",
    "missing-meta": "'meta' is a required property",
    "extra-key": "'speed' was unexpected",
    "bad-grade": "'E' is not one of ['A+', 'A', 'B', 'C', 'D', 'F']",
    "bad-dscp": "64 is greater than the maximum of 63",
    "bad-fairness": "1.5 is greater than the maximum of 1",
    "series-string": "'lost' is not of type 'number', 'null'",
    "phase-extra-key": "'rate' was unexpected",
    "bad-pair": "'s1-d1' does not match",
}


def errors_of(validator, doc):
    """All validation errors as 'path: message' lines, sorted for stable output."""
    out = []
    for e in validator.iter_errors(doc):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        out.append(f"{path or '(document)'}: {e.message}")
    return sorted(out)


def generate(generator, kind):
    text = subprocess.run([generator, kind], check=True, capture_output=True, text=True).stdout
    return json.loads(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", required=True)
    parser.add_argument("--generator", help="report_schema_sample program")
    parser.add_argument("documents", nargs="*", help="results JSON files to validate")
    args = parser.parse_args()

    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)  # the schema itself is valid 2020-12
    validator = Draft202012Validator(schema)

    failures = 0
    for path in args.documents:
        with open(path, encoding="utf-8") as f:
            errors = errors_of(validator, json.load(f))
        for e in errors:
            print(f"{path}: {e}")
        failures += bool(errors)

    if args.generator:
        for kind in VALID_SAMPLES:
            errors = errors_of(validator, generate(args.generator, kind))
            for e in errors:
                print(f"sample {kind}: {e}")
            failures += bool(errors)
            print(f"sample {kind}: {'INVALID' if errors else 'valid'}")
        for kind, expected in INVALID_SAMPLES.items():
            errors = errors_of(validator, generate(args.generator, kind))
            if not any(expected in e for e in errors):
                print(f"sample {kind}: expected a rejection containing {expected!r}, got {errors}")
                failures += 1
            else:
                print(f"sample {kind}: rejected as expected")

    if failures:
        sys.exit(f"validate_results.py: {failures} document(s) failed")


if __name__ == "__main__":
    main()
