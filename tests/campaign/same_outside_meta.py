#!/usr/bin/env python3
"""Exit 0 when two nicsim results files are byte-identical outside "meta" (the top-level
"meta" object, as json.cc writes it: from '\n  "meta": ' to '\n  "runs": [')."""
import sys


def without_meta(path):
    text = open(path, encoding="utf-8").read()
    start = text.find('\n  "meta": ')
    end = text.find('\n  "runs": [')
    if start < 0 or end < start:
        sys.exit(f"{path}: no meta block")
    return text[:start] + text[end:]


a, b = sys.argv[1], sys.argv[2]
if without_meta(a) != without_meta(b):
    sys.exit(f"{a} and {b} differ outside meta")
