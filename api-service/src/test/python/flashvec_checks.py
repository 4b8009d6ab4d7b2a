"""Schemathesis checks of FlashVec's own, loaded with SCHEMATHESIS_HOOKS=flashvec_checks.

no_internal_details: an error answer never shows the server's insides: no Java class or exception
name, no stack frame, no path of the server's data directory (FLASHVEC_DATA_DIR).
"""

import os
import re

import schemathesis

_CLASS = re.compile(
    r"\b(?:java|javax|jdk|sun|tools\.jackson|com\.fasterxml|io\.netty|reactor|org\.springframework"
    r"|io\.flashvec)(?:\.[a-z_][a-z0-9_]*)+\.[A-Z][A-Za-z0-9_$]*"
)
_EXCEPTION = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Exception|Error)\b")
_FRAME = re.compile(r"\.java:\d+\)")


@schemathesis.check
def no_internal_details(ctx, response, case):
    """An error body names no Java class, exception or stack frame and no server path."""
    if response.status_code < 400:
        return None
    body = response.text or ""
    data_dir = os.environ.get("FLASHVEC_DATA_DIR", "")
    problems = []
    if data_dir and data_dir in body:
        problems.append("the data directory's path")
    for name, pattern in (("a Java class", _CLASS), ("an exception name", _EXCEPTION),
                          ("a stack frame", _FRAME)):
        m = pattern.search(body)
        # the request's own text may come back in a message; only what the client did not send counts
        if m and m.group(0) not in (case.as_curl_command() if hasattr(case, "as_curl_command") else ""):
            problems.append(f"{name} ({m.group(0)})")
    if problems:
        raise AssertionError(
            f"error body shows {', '.join(problems)}: {body[:300]}"
        )
    return None
