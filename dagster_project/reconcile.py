"""Reconciliation mode: recompute published certificates from their reported pool figures.

    .venv/bin/python -m dagster_project.reconcile --deal DEAL_FILE --reported CSV --out DIR
    .venv/bin/python -m dagster_project.reconcile --deal A.yaml --reported a.csv \
        --deal B.yaml --reported b.csv --out DIR        # several trusts, one dbt build

CSV columns: distribution_date,line,value, with the certificate's line ids for the deal (see
dagster_project/certificate_layout.py; `8i_end` for eight classes, `8h_end` for seven). The dbt
waterfall models run with var pool_inputs=reported on a scratch DuckDB file: lines 1-7, 12-14,
15, 17a-c, 18a-c, 20, 21, 27, 41, 52, 75-79 are inputs; the state before the first date comes from
its lines 8*_begin, 51, 26b and the Additional Note Interest lines. Everything else is recomputed.
Writes DIR/certificate.csv, DIR/reconciliation.csv and DIR/assumptions.csv (inputs the CSV did
not give and how they were filled); with several trusts, DIR/<deal_id>/ for each. A reported
figure is compared at the precision it was printed (some certificates print whole dollars).
"""

import argparse
import csv
import datetime as dt
import os
import subprocess
import sys
import tempfile
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import Deal, DealFileError, load_deal
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.money import round_cents
from dagster_project.warehouse import insert_rows

DBT_DIR = Path(__file__).resolve().parent.parent / "dbt"

# raw.reported_pool_inputs: (column, type, certificate key or None, default when not reported)
POOL_INPUTS = [
    ("beginning_pool_balance", "decimal(18, 2)", "beginning_pool_balance", None),
    ("principal_collections_amount", "decimal(18, 2)", "principal_collections_amount", None),
    ("purchase_principal_amount", "decimal(18, 2)", "purchase_principal_amount", "0"),
    ("defaulted_receivables_amount", "decimal(18, 2)", "defaulted_receivables_amount", "0"),
    ("ending_pool_balance", "decimal(18, 2)", "ending_pool_balance", None),
    ("receivables_outstanding", "bigint", "receivables_outstanding", None),
    ("initial_pool_balance", "decimal(18, 2)", "initial_pool_balance", "deal"),
    ("weighted_average_coupon_percent", "decimal(18, 2)", "weighted_average_coupon_percent", None),
    ("weighted_average_original_term", "decimal(18, 2)", "weighted_average_original_term", None),
    ("weighted_average_remaining_term", "decimal(18, 2)", "weighted_average_remaining_term", None),
    ("index_rate", "decimal(12, 9)", "index_rate", "0"),
    (
        "finance_charge_collections_amount",
        "decimal(18, 2)",
        "finance_charge_collections_amount",
        "estimate",
    ),
    (
        "liquidation_finance_charge_amount",
        "decimal(18, 2)",
        "liquidation_finance_charge_amount",
        "0",
    ),
    ("purchase_finance_charge_amount", "decimal(18, 2)", "purchase_finance_charge_amount", "0"),
    ("liquidation_principal_amount", "decimal(18, 2)", "liquidation_principal_amount", "0"),
    (
        "collection_account_interest_amount",
        "decimal(18, 2)",
        "collection_account_interest_amount",
        "0",
    ),
    ("simple_interest_advances_amount", "decimal(18, 2)", "simple_interest_advances_amount", "0"),
    (
        "reserve_investment_earnings_amount",
        "decimal(18, 2)",
        "reserve_account_investment_earnings",
        "0",
    ),
    (
        "unreimbursed_servicer_advances_amount",
        "decimal(18, 2)",
        "unreimbursed_servicer_advances_amount",
        "0",
    ),
    ("transition_expenses_amount", "decimal(18, 2)", None, "0"),
    ("indemnity_amounts_amount", "decimal(18, 2)", None, "0"),
    (
        "additional_servicing_fee_amount",
        "decimal(18, 2)",
        "additional_servicing_fee_paid_amount",
        "0",
    ),
    ("tangible_net_worth_amount", "decimal(18, 2)", "tangible_net_worth_amount", None),
    ("net_losses_amount", "decimal(18, 2)", "net_losses_amount", None),
    ("cumulative_net_losses_amount", "decimal(18, 2)", "cumulative_net_losses_amount", None),
    ("cumulative_net_loss_percent", "decimal(18, 2)", "cumulative_net_loss_percent", None),
] + [
    (
        f"delinquent_{bucket}_{part}",
        "bigint" if part == "count" else "decimal(18, 2)",
        f"delinquent_{bucket}_{part}",
        None,
    )
    for bucket in ("31_60", "61_90", "91_plus")
    for part in ("count", "balance")
]


class ReconcileError(ValueError):
    """A malformed reported-figures CSV (the message names the file, row and field)."""


def read_reported(path: Path, deal: Deal) -> dict[dt.date, dict[str, str]]:
    """{distribution_date: {line: value}} from the CSV, validated."""
    layout_lines = {line.line for line in certificate_layout(deal)}
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as error:
        raise ReconcileError(f"{path}: cannot read the reported figures: {error}") from error
    with handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or [f.strip() for f in reader.fieldnames] != [
            "distribution_date",
            "line",
            "value",
        ]:
            raise ReconcileError(
                f"{path}: the header must be distribution_date,line,value, got {reader.fieldnames}"
            )
        out: dict[dt.date, dict[str, str]] = {}
        for row_number, row in enumerate(reader, start=2):
            try:
                date = dt.date.fromisoformat((row["distribution_date"] or "").strip())
            except ValueError as error:
                raise ReconcileError(
                    f"{path}: row {row_number}, field distribution_date: not a date (YYYY-MM-DD): "
                    f"{row['distribution_date']!r}"
                ) from error
            line = (row["line"] or "").strip()
            if line not in layout_lines:
                raise ReconcileError(
                    f"{path}: row {row_number}, field line: {line!r} is not a line of the "
                    f"certificate of {deal.trust_name}"
                )
            value = (row["value"] or "").strip().replace(",", "").replace("$", "")
            if value not in ("Yes", "No"):
                try:
                    Decimal(value)
                except InvalidOperation as error:
                    raise ReconcileError(
                        f"{path}: row {row_number}, field value: not a number: {row['value']!r}"
                    ) from error
            if line in out.setdefault(date, {}):
                raise ReconcileError(f"{path}: row {row_number}: line {line} repeated for {date}")
            out[date][line] = value
    if not out:
        raise ReconcileError(f"{path}: no reported figures")
    return out


def build_inputs(deal: Deal, reported: dict[dt.date, dict[str, str]]):
    """Rows of raw.reported_pool_inputs and raw.reported_opening_state, and the assumptions."""
    layout = certificate_layout(deal)
    line_of = {}
    for line in layout:
        line_of.setdefault(line.key, line.line)
    periods = {p.distribution_date: p for p in payment_periods(deal)}
    dates = sorted(reported)
    unknown = [d for d in dates if d not in periods]
    if unknown:
        raise ReconcileError(f"{unknown[0]} is not a Distribution Date of {deal.trust_name}")
    numbers = [periods[d].period_number for d in dates]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ReconcileError("the reported Distribution Dates must be consecutive")
    assumptions = []
    rows = []
    for date in dates:
        lines = reported[date]

        def value(key, date=date, lines=lines):
            line = line_of.get(key)
            return lines.get(line) if line else None

        row = {"deal_id": deal.deal_id, "distribution_date": date}
        for column, _type, key, default in POOL_INPUTS:
            found = value(key) if key else None
            if found is not None and key == "index_rate":
                found = str(Decimal(found) / 100)  # printed as a percent
            if found is None and default is not None:
                if default == "deal":
                    found = str(deal.initial_pool_balance)
                elif default == "estimate":
                    coupon = value("weighted_average_coupon_percent")
                    found = str(round_cents(Decimal(lines["1"]) * Decimal(coupon or "0") / 1200))
                    assumptions.append(
                        (date, column, found, "line 12 coupon / 12 x line 1")
                        if coupon
                        else (
                            date,
                            column,
                            found,
                            "not reported, and no coupon (line 12) to "
                            "estimate it: Available Funds are understated",
                        )
                    )
                else:
                    found = default
                    if key in line_of:
                        assumptions.append(
                            (date, column, found, f"not reported (line {line_of[key]})")
                        )
            if found is None and column in (
                "beginning_pool_balance",
                "principal_collections_amount",
                "ending_pool_balance",
            ):
                raise ReconcileError(f"{date}: line {line_of[key]} ({column}) is required")
            row[column] = found
        rows.append(row)

    first = reported[dates[0]]
    first_number = numbers[0]
    opening = []
    for c in deal.classes:
        begin = first.get(line_of[f"class_balance_begin:{c.class_id}"])
        if begin is None:
            if first_number != 1:
                raise ReconcileError(
                    f"{dates[0]}: line {line_of[f'class_balance_begin:{c.class_id}']} "
                    f"({c.label} beginning balance) is required to start mid-life"
                )
            begin = str(c.initial_balance)
        unpaid = first.get(line_of[f"additional_note_interest:{c.class_id}"], "0")
        opening.append((first_number, c.class_id, begin, unpaid))
    reserve = first.get(line_of["reserve_account_beginning_balance"])
    if reserve is None:
        reserve = str(
            deal.initial_reserve_deposit if first_number == 1 else deal.required_reserve_amount
        )
        assumptions.append((dates[0], "reserve_account_balance", reserve, "not reported (line 51)"))
    fee_unpaid = first.get(line_of["servicing_fee_unpaid_prior_amount"], "0")
    opening_rows = [(deal.deal_id, n, cid, b, u, reserve, fee_unpaid) for n, cid, b, u in opening]
    return rows, opening_rows, assumptions


def load_reported_tables(con, rows: list[dict], opening_rows: list[tuple]) -> None:
    columns = ", ".join(f"{name} {kind}" for name, kind, _key, _default in POOL_INPUTS)
    con.execute("create schema if not exists raw")
    con.execute(
        "create or replace table raw.reported_pool_inputs "
        f"(deal_id varchar, distribution_date date, {columns})"
    )
    names = ["deal_id", "distribution_date"] + [name for name, *_ in POOL_INPUTS]
    insert_rows(con, "raw.reported_pool_inputs", [[row.get(n) for n in names] for row in rows])
    con.execute(
        "create or replace table raw.reported_opening_state (deal_id varchar, "
        "period_number integer, class_id varchar, note_balance decimal(18, 2), "
        "unpaid_interest decimal(18, 2), reserve_account_balance decimal(18, 2), "
        "servicing_fee_unpaid decimal(18, 2))"
    )
    insert_rows(con, "raw.reported_opening_state", opening_rows)


def run_waterfall_models(
    database: Path, workdir: Path, select: tuple[str, ...] = ("+rpt_servicer_certificate",)
) -> None:
    """dbt on the scratch database, in reconciliation mode (its own target and log folders):
    the models of `select` and what they read."""
    dbt = Path(sys.executable).parent / "dbt"
    env = {**os.environ, "CAOT_WAREHOUSE_WORK": str(database)}
    result = subprocess.run(
        [
            str(dbt),
            "build",
            "--quiet",
            "--select",
            *select,
            "--vars",
            '{"pool_inputs": "reported"}',
            "--indirect-selection",
            "cautious",
            # lines the CSV does not report and no rule computes (e.g. delinquency) stay empty;
            # dbt's unit tests are the test suite's
            "--exclude",
            "not_null_rpt_servicer_certificate_value test_type:unit",
            "--target-path",
            str(workdir / "target"),
            "--log-path",
            str(workdir / "logs"),
        ],
        cwd=DBT_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"dbt failed in reconciliation mode:\n{result.stdout}\n{result.stderr}")


def reconcile(pairs: list[tuple[Path, Path]], out: Path) -> dict[str, dict]:
    """Reconcile each (deal file, reported CSV) pair; all trusts in one dbt build. One pair
    writes its results into `out`, several into `out/<deal_id>/`."""
    deals = [load_deal(deal_file) for deal_file, _reported in pairs]
    ids = [deal.deal_id for deal in deals]
    if len(set(ids)) < len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ReconcileError(f"a trust is given twice: {twice}")
    prepared = []
    for deal, (_deal_file, reported_csv) in zip(deals, pairs, strict=True):
        reported = read_reported(reported_csv, deal)
        prepared.append((deal, reported, *build_inputs(deal, reported)))
    with tempfile.TemporaryDirectory(prefix="reconcile-") as scratch:
        database = Path(scratch) / "reconcile.duckdb"
        con = duckdb.connect(str(database))
        load_deal_tables(con, [deal for deal, *_ in prepared])
        load_reported_tables(
            con,
            [row for *_, rows, _opening, _assumed in prepared for row in rows],
            [row for *_, opening, _assumed in prepared for row in opening],
        )
        con.close()
        run_waterfall_models(database, Path(scratch))
        con = duckdb.connect(str(database), read_only=True)
        certificates = {
            deal.deal_id: con.execute(
                "select distribution_date, line, value from marts.rpt_servicer_certificate "
                "where deal_id = ? order by distribution_date, line_order",
                [deal.deal_id],
            ).fetchall()
            for deal, *_ in prepared
        }
        con.close()
    summaries = {}
    for deal, reported, _rows, _opening, assumptions in prepared:
        folder = out if len(prepared) == 1 else out / deal.deal_id
        summaries[deal.deal_id] = write_results(
            folder, certificates[deal.deal_id], reported, assumptions
        )
    return summaries


def printed_difference(recomputed: str, given: str) -> Decimal:
    """Recomputed less reported, at the precision the certificate printed: a figure printed in
    whole dollars (e.g. `12,090,686` on some certificates) is compared with the recomputed one
    rounded half up to whole dollars."""
    value, printed = Decimal(recomputed), Decimal(given)
    exponent = max(printed.as_tuple().exponent, value.as_tuple().exponent)
    rounded = value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP)
    return (rounded - printed).quantize(Decimal(1).scaleb(value.as_tuple().exponent))


def write_results(out: Path, certificate, reported, assumptions) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "certificate.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "value"])
        writer.writerows(
            (d.isoformat(), line, "" if v is None else v) for d, line, v in certificate
        )
    compared = differing = 0
    with (out / "reconciliation.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "line", "reported", "recomputed", "difference"])
        for date, line, value in certificate:
            if line not in reported.get(date, {}):
                continue
            given = reported[date][line]
            if value is None:
                difference = ""
            elif given in ("Yes", "No") or value in ("Yes", "No"):
                difference = "0" if given == value else "differs"
            else:
                difference = format(printed_difference(value, given), "f")
            compared += 1
            if difference == "differs" or (difference and Decimal(difference) != 0):
                differing += 1
            writer.writerow(
                [date.isoformat(), line, given, "" if value is None else value, difference]
            )
    with (out / "assumptions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["distribution_date", "input", "value", "reason"])
        writer.writerows((d.isoformat(), c, v, r) for d, c, v, r in assumptions)
    return {"dates": len(reported), "compared": compared, "differing": differing}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--deal", required=True, type=Path, action="append", help="deal file (YAML); repeatable"
    )
    parser.add_argument(
        "--reported",
        required=True,
        type=Path,
        action="append",
        help="distribution_date,line,value CSV, one per --deal, in the same order",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    args = parser.parse_args(argv)
    if len(args.deal) != len(args.reported):
        parser.error("give one --reported CSV for each --deal file")
    try:
        summaries = reconcile(list(zip(args.deal, args.reported, strict=True)), args.out)
    except (DealFileError, ReconcileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for deal_id, summary in summaries.items():
        where = args.out if len(summaries) == 1 else args.out / deal_id
        print(
            f"{deal_id}: {summary['dates']} Distribution Date(s); {summary['compared']} reported "
            f"lines compared, {summary['differing']} differ. Results in {where}/"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
