"""Where a report's figures come from, printed on it: the code version (git commit), the deal
file's SHA-256, and the SHA-256 of every delivered file behind the figures (the Receivable
Schedule, the market inputs, the Collection Period's own tapes, and one digest of the earlier
periods' tapes, each of which is listed in raw.deliveries).

A certificate's lines are stable from run to run (its version's time, not the run's), so an
unchanged certificate keeps its published PDF.
"""

import datetime as dt
import hashlib
import html
import subprocess
from functools import cache
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ONCE_DELIVERED = ("receivable_schedule", "index_rates", "trust_account_earnings")
TAPES = ("loan_status", "payment_transactions")


@cache
def code_version() -> str:
    """The git commit of the code that rendered (with "+changes" when the working tree differs
    from it); "unknown" outside a git checkout."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}+changes" if changed else commit


class Provenance:
    """The files behind one trust's figures, read once from the warehouse."""

    def __init__(self, con, deal_id: str):
        self.deal_id = deal_id
        self.deal_file = con.execute(
            "select deal_file, deal_file_sha256 from raw.deals where deal_id = ?", [deal_id]
        ).fetchone()
        rows = con.execute(
            "select deal_id, file_kind, scope, sha256 from raw.deliveries "
            "where status = 'loaded' and deal_id in (?, 'shelf') order by scope, file_kind",
            [deal_id],
        ).fetchall()
        self.once = {kind: sha for _deal, kind, _scope, sha in rows if kind not in TAPES}
        self.tapes = [(scope, kind, sha) for _deal, kind, scope, sha in rows if kind in TAPES]

    def _common(self) -> list[str]:
        name, digest = self.deal_file or ("?", "?")
        lines = [f"Code version {code_version()}; deal file {name}, SHA-256 {digest}."]
        lines += [
            f"{kind.replace('_', ' ').capitalize()}: SHA-256 {self.once[kind]}."
            for kind in (*ONCE_DELIVERED, "tangible_net_worth")
            if kind in self.once
        ]
        return lines

    @staticmethod
    def _digest(tapes: list[tuple[str, str, str]]) -> str:
        return hashlib.sha256("\n".join(sha for _, _, sha in tapes).encode()).hexdigest()

    def for_period(self, collection_period: str, computed: str) -> tuple[str, ...]:
        """A certificate's or statement's: `computed` says when (its version's time)."""
        own = [(s, k, sha) for s, k, sha in self.tapes if s == collection_period]
        earlier = [(s, k, sha) for s, k, sha in self.tapes if s < collection_period]
        lines = [f"Computed {computed}.", *self._common()]
        lines += [f"{collection_period} {kind}: SHA-256 {sha}." for _, kind, sha in own]
        if earlier:
            periods = len({s for s, _, _ in earlier})
            lines.append(
                f"The {periods} earlier Collection Periods' {len(earlier)} tape files: SHA-256 "
                f"of their SHA-256s in period order {self._digest(earlier)} (each in "
                "raw.deliveries)."
            )
        return tuple(lines)

    def for_trust(self, generated: dt.datetime) -> tuple[str, ...]:
        """A report over every period (performance, auditor)."""
        periods = len({s for s, _, _ in self.tapes})
        return (
            f"Generated {generated:%Y-%m-%d %H:%M} UTC.",
            *self._common(),
            f"{periods} Collection Periods' {len(self.tapes)} tape files: SHA-256 of their "
            f"SHA-256s in period order {self._digest(self.tapes)} (each in raw.deliveries).",
        )


def provenance_html(lines: tuple[str, ...]) -> str:
    """The provenance block at the foot of a report page (nothing when there is none)."""
    if not lines:
        return ""
    return (
        '<h2>Provenance</h2><div style="font-size:0.75em;color:#555;word-break:break-all">'
        + "".join(f"<p>{html.escape(line)}</p>" for line in lines)
        + "</div>"
    )
