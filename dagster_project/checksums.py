"""A delivered file's SHA-256: the identity of a delivery in the ledger (raw.deliveries), in the
generator's manifests and in the inbox sensor's cursor. Its own module so that loading and
watching deliveries import neither the generator nor pandas."""

import hashlib
from pathlib import Path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
