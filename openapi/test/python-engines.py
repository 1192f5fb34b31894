"""Verdicts of Python's `re` (as Python JSON Schema tools apply a pattern: re.search) and, when importable,
jsonschema-rs (the Rust validator: {"pattern": p}) for every pattern on every string.

stdin: {"patterns": [...], "strings": [...]} (JSON; lone surrogates arrive as "\\ud800" escapes).
stdout: {"re": [[true|false|null...]...], "jsonschema-rs": [[...]] or null, "jsonschema-rs-version": ...,
"errors": {"re": [...], "jsonschema-rs": [...]}}: null where the engine cannot take the string at all (a lone
surrogate is not a Unicode scalar value, which Rust strings must be), a compile error per pattern or null.
"""
import json
import re
import sys

request = json.load(sys.stdin)
patterns, strings = request["patterns"], request["strings"]

try:
    import jsonschema_rs
except ImportError:
    jsonschema_rs = None


def run(compile_, test):
    verdicts, errors = [], []
    for pattern in patterns:
        try:
            matcher = compile_(pattern)
        except Exception as error:  # noqa: BLE001 - any refusal to compile is the finding
            verdicts.append(None)
            errors.append(str(error).splitlines()[0])
            continue
        errors.append(None)
        row = []
        for text in strings:
            try:
                row.append(bool(test(matcher, text)))
            except (UnicodeEncodeError, ValueError):
                row.append(None)
        verdicts.append(row)
    return verdicts, errors


re_verdicts, re_errors = run(re.compile, lambda compiled, text: compiled.search(text))
result = {"re": re_verdicts, "errors": {"re": re_errors}, "jsonschema-rs": None}
if jsonschema_rs is not None:
    rs_verdicts, rs_errors = run(
        lambda pattern: jsonschema_rs.validator_for({"type": "string", "pattern": pattern}),
        lambda validator, text: validator.is_valid(text),
    )
    result["jsonschema-rs"] = rs_verdicts
    result["errors"]["jsonschema-rs"] = rs_errors
    result["jsonschema-rs-version"] = getattr(jsonschema_rs, "__version__", "?")
json.dump(result, sys.stdout)
