"""Trusts defined from their SEC filings alone: EX-102 asset-level files and a deal file each.

    .venv/bin/python -m dagster_project.public_filings --deal DEAL.yaml --filings DIR --out OUT \
        [--published CSV]
    .venv/bin/python -m dagster_project.public_filings --deal A.yaml --filings DIR_A \
        --deal B.yaml --filings DIR_B --out OUT     # several trusts, one warehouse

DIR holds a trust's EX-102 files (Form ABS-EE, Schedule AL Item 3), one per reporting period
(of several pool variants for one period, CAOT_EX102_VARIANT names the one to read). The earliest
filing defines the pool: the receivables with a balance at the beginning of its reporting period
are the Receivable Schedule as of the day before, which must be the deal file's Cutoff Date (for a
trust followed from a later filing, a copy of its deal file states that day and that pool; the
Section 2.3 suites then speak as of it). Every filing is then that period's delivery. DIR may also
hold the trust's index_rates.csv and trust_account_earnings.csv and the shelf's
tangible_net_worth.csv (one series for every trust: the last folder to give one sets it), read from
the published certificates; without them the pool lines are computed, and the certificates that
need them are withheld.

The command lays the files out as a shelf under OUT/inputs (OUT/deals holds the deal files; a
trust laid out by an earlier call stays), runs the pipeline (the same Dagster jobs `make run`
launches) on a warehouse of its own under OUT, and prints the pool lines computed from the
loan-level data for each Distribution Date (Exhibit A lines 1-6, 12-14, 17-18 and 75-78);
OUT/<deal_id>/pool_lines.csv holds them as distribution_date,line,value.

--published (one per --deal, in order; `-` for a trust without): the figures of the trust's
published certificates (distribution_date,line,value, as data/reconciliation/certificates/ holds
them). The computed
pool lines are compared with the published ones (OUT/<deal_id>/published_comparison.csv), then
reconciliation mode recomputes the note balances, factors and overcollateralization from the
computed pool lines and the published state before the first date (OUT/<deal_id>/
reconciliation.csv, certificate.csv and assumptions.csv, as dagster_project.reconcile writes them).
"""

import argparse
import csv
import datetime as dt
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dagster_project.deal import PROJECT_ROOT, Deal, DealFileError, load_deal
from dagster_project.ingestion import ex102

# Certificate keys of the pool lines computed from loan-level data (dagster_project/
# certificate_layout.py): Exhibit A lines 1-6, 12-14, 17a-d, 18a-d, 75-77 and 78.
POOL_KEYS = (
    "beginning_pool_balance",
    "principal_collections_amount",
    "purchase_principal_amount",
    "defaulted_receivables_amount",
    "ending_pool_balance",
    "receivables_outstanding",
    "weighted_average_coupon_percent",
    "weighted_average_original_term",
    "weighted_average_remaining_term",
    "finance_charge_collections_amount",
    "liquidation_finance_charge_amount",
    "purchase_finance_charge_amount",
    "available_finance_charge_collections_amount",
    "liquidation_principal_amount",
    "available_principal_collections_amount",
    "net_losses_amount",
    "cumulative_net_losses_amount",
    "cumulative_net_loss_percent",
    *(
        f"delinquent_{bucket}_{part}"
        for bucket in ("31_60", "61_90", "91_plus", "total")
        for part in ("count", "balance")
    ),
)
MARKET_FILES = ("index_rates.csv", "trust_account_earnings.csv")  # the trust's own
SHELF_FILES = ("tangible_net_worth.csv",)


class FilingsError(ValueError):
    """Filings that cannot define the trust (the message names the file and what is wrong)."""


@dataclass(frozen=True)
class Filing:
    path: Path
    period: str  # YYYY-MM of the reporting period's end
    begin: dt.date


def find_filings(folder: Path) -> list[Filing]:
    """The EX-102 files of `folder`, one per reporting period, in period order (the filings'
    other XML exhibits, such as EX-103, are passed over)."""
    by_period: dict[str, list[tuple[Path, dt.date]]] = {}
    for path in sorted(Path(folder).glob("*.xml")):
        if not ex102.is_asset_data(path):
            continue
        try:
            begin, end = ex102.reporting_period(path)
        except ex102.Ex102Error as error:
            raise FilingsError(str(error)) from error
        by_period.setdefault(end[:7], []).append((path, dt.date.fromisoformat(begin)))
    if not by_period:
        raise FilingsError(f"{folder}: no EX-102 files (*.xml)")
    filings = []
    for period, found in sorted(by_period.items()):
        try:
            chosen = ex102.choose_file(
                [path for path, _ in found], os.environ.get("CAOT_EX102_VARIANT")
            )
        except ex102.Ex102Error as error:
            raise FilingsError(f"reporting period {period}: {error}") from error
        filings.append(Filing(chosen, period, dict(found)[chosen]))
    return filings


def _place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)  # the filings are large: a hard link where the disk allows
    except OSError:
        shutil.copyfile(source, target)


def lay_out(deal: Deal, filings: list[Filing], out: Path) -> tuple[Path, Path]:
    """Write the trust's inputs under out/inputs and its deal file under out/deals; return both
    folders. The first filing must report the period that begins the day after the Cutoff Date;
    the market inputs are taken from the filings' folder where it has them."""
    first = filings[0]
    if first.begin != deal.cutoff_date + dt.timedelta(days=1):
        raise FilingsError(
            f"{first.path}: its reporting period begins {first.begin}, so the pool it defines is "
            f"as of {first.begin - dt.timedelta(days=1)}; the Cutoff Date of {deal.path} is "
            f"{deal.cutoff_date}. Give the trust's first filing, or a deal file whose cutoff_date "
            "and initial_pool_balance are that day's (docs/public_filings.md)."
        )
    inputs, deals = out / "inputs", out / "deals"
    trust = inputs / deal.deal_id
    if trust.exists():
        shutil.rmtree(trust)  # the folder is the command's own: rebuilt from the filings
    _place(first.path, trust / "receivable_schedule.xml")
    for filing in filings:
        _place(filing.path, trust / "deliveries" / filing.period / filing.path.name)
    market = first.path.parent
    for name in MARKET_FILES + SHELF_FILES:
        if (market / name).exists():
            shutil.copyfile(market / name, (trust if name in MARKET_FILES else inputs) / name)
    deals.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(deal.path, deals / f"{deal.deal_id}.yaml")
    return inputs, deals


def pool_lines(con, deal_id: str) -> list[tuple[dt.date, str, str, str]]:
    """(Distribution Date, line, key, value) of every pool line computed for the trust."""
    return con.execute(
        "select distribution_date, line, key, value from marts.rpt_servicer_certificate "
        "where deal_id = ? and list_contains(?, key) and section <> 'Collection Account Activity' "
        "order by distribution_date, line_order",
        [deal_id, list(POOL_KEYS)],
    ).fetchall()


def write_lines(path: Path, lines) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "value"])
        writer.writerows((date.isoformat(), line, value) for date, line, _key, value in lines)


def compare_published(lines, published: dict[dt.date, dict[str, str]], path: Path) -> int:
    """Write each computed pool line beside the published figure (at its printed precision);
    return how many differ."""
    from dagster_project.reconcile import printed_difference

    differing = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "computed", "published", "difference"])
        for date, line, _key, value in lines:
            given = published.get(date, {}).get(line)
            if given is None or value is None:
                continue
            difference = printed_difference(value, given)
            differing += difference != 0
            writer.writerow([date.isoformat(), line, value, given, format(difference, "f")])
    return differing


def reconciliation_inputs(lines, published: dict[dt.date, dict[str, str]], path: Path) -> Path:
    """The input of reconciliation mode: the published figures of the Distribution Dates both
    cover, every pool line replaced by the computed one."""
    computed: dict[dt.date, dict[str, str]] = {}
    for date, line, _key, value in lines:
        if date in published and value is not None:
            computed.setdefault(date, {})[line] = value
    if not computed:
        raise FilingsError(f"{path.parent.name}: no Distribution Date is computed and published")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "value"])
        for date in sorted(computed):
            merged = published[date] | computed[date]
            writer.writerows((date.isoformat(), line, value) for line, value in merged.items())
    return path


def print_lines(lines, out=None) -> None:
    dates = sorted({date for date, *_ in lines})
    labels: dict[str, str] = {}
    values: dict[tuple[dt.date, str], str] = {}
    for date, line, key, value in lines:
        labels.setdefault(line, key)
        values[(date, line)] = "" if value is None else value
    width = max(len(f"{line} {key}") for line, key in labels.items())
    for start in range(0, len(dates), 6):  # six Distribution Dates a block
        block = dates[start : start + 6]
        print(f"{'line':<{width}}" + "".join(f"{d.isoformat():>18}" for d in block), file=out)
        for line, key in labels.items():
            cells = "".join(f"{values.get((d, line), ''):>18}" for d in block)
            print(f"{f'{line} {key}':<{width}}{cells}", file=out)
        print(file=out)


def run_pipeline(inputs: Path, out: Path) -> int:
    """The pipeline (the jobs `make run` launches) on a warehouse of its own under `out`."""
    from dagster_project.warehouse import isolated_environment

    return subprocess.run(
        [sys.executable, "-m", "dagster_project.pipeline"],
        env=isolated_environment(inputs, out),
        cwd=PROJECT_ROOT,
        check=False,
    ).returncode


def main(argv=None, run=run_pipeline) -> int:
    """The command; `run(inputs, out)` runs the pipeline (tests run it in-process)."""
    parser = argparse.ArgumentParser(
        prog="python -m dagster_project.public_filings",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument(
        "--deal", required=True, type=Path, action="append", help="deal file (YAML); repeatable"
    )
    parser.add_argument(
        "--filings", required=True, type=Path, action="append", help="EX-102 folder, per --deal"
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--published",
        type=Path,
        action="append",
        help="published figures (CSV), per --deal ('-': none for that trust)",
    )
    args = parser.parse_args(argv)
    if len(args.filings) != len(args.deal) or len(args.published or args.deal) != len(args.deal):
        parser.error("give one --filings folder (and one --published CSV, if any) per --deal")
    import duckdb

    from dagster_project.reconcile import ReconcileError, read_reported, reconcile

    out = args.out.resolve()
    trusts = []
    try:
        for number, (deal_file, folder) in enumerate(zip(args.deal, args.filings, strict=True)):
            deal = load_deal(deal_file)
            given = args.published[number] if args.published else None
            published = read_reported(given, deal) if given and str(given) != "-" else None
            filings = find_filings(folder)
            inputs, _deals = lay_out(deal, filings, out)
            trusts.append((deal, filings, published))
            print(
                f"{deal.trust_name}: {len(filings)} filings, {filings[0].period} to "
                f"{filings[-1].period}; the pool as of {deal.cutoff_date} from "
                f"{filings[0].path.name}",
                flush=True,
            )
    except (DealFileError, FilingsError, ReconcileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    code = run(inputs, out)
    if code not in (0, 3):
        print(f"error: the pipeline failed (exit status {code})", file=sys.stderr)
        return 1
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    try:
        computed = {deal.deal_id: pool_lines(con, deal.deal_id) for deal, _f, _p in trusts}
    finally:
        con.close()
    pairs = []
    for deal, _filings, published in trusts:
        folder, lines = out / deal.deal_id, computed[deal.deal_id]
        folder.mkdir(parents=True, exist_ok=True)
        write_lines(folder / "pool_lines.csv", lines)
        print(f"\n{deal.trust_name}: pool lines computed from the filings")
        print_lines(lines)
        if published is not None:
            differing = compare_published(lines, published, folder / "published_comparison.csv")
            print(f"pool lines differing from the published certificates: {differing}")
            try:
                inputs_csv = reconciliation_inputs(
                    lines, published, folder / "reconciliation_inputs.csv"
                )
            except FilingsError as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            pairs.append((deal, inputs_csv))
    if pairs:  # one dbt build; its results land in OUT/<deal_id>/ beside the pool lines
        target = out / pairs[0][0].deal_id if len(pairs) == 1 else out
        summaries = reconcile([(deal.path, csv_path) for deal, csv_path in pairs], target)
        for deal, _csv in pairs:
            summary = summaries[deal.deal_id]
            print(
                f"{deal.trust_name}: reconciliation from the computed pool lines: "
                f"{summary['compared']} published lines compared, {summary['differing']} differ "
                f"({out / deal.deal_id / 'reconciliation.csv'})"
            )
    print(f"\nwarehouse: {out / 'warehouse.duckdb'}; reports: {out / 'reports'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
