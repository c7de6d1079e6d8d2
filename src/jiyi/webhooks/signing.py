"""Signed deliveries. Each POST carries

    X-Jiyi-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>

where `secret` is the webhook's secret as UTF-8 (the whole string, "whsec_" included), given once when the webhook
was created. A receiver recomputes the HMAC over the raw body bytes it got, compares in constant time, and refuses a
`t` far from its clock (a replayed delivery). `verify_signature` does all three, in a dozen lines to copy.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

SIGNATURE_HEADER = "X-Jiyi-Signature"
TOLERANCE = 300  # seconds a receiver should accept between `t` and its own clock


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The X-Jiyi-Signature value for `body`, signed now (or at `timestamp`)."""
    stamp = int(time.time()) if timestamp is None else timestamp
    return f"t={stamp},v1={signature(secret, stamp, body)}"


def verify_signature(secret: str, header: str, body: bytes, *, tolerance: float = TOLERANCE,
                     now: float | None = None) -> bool:
    """True when `header` is a valid X-Jiyi-Signature of `body` made with `secret` within `tolerance` seconds."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        stamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - stamp) > tolerance:
        return False
    return hmac.compare_digest(parts.get("v1", ""), signature(secret, stamp, body))
