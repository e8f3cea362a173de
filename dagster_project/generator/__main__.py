"""Generate the sample shelf: `python -m dagster_project.generator [--deal FILE] [--as-of YYYY-MM]`,
or a bigger one: `--trusts N` (generator/sample_trusts.py).

One trust per deal file of the shelf (data/deals/, CAOT_DEALS_DIR; or the --deal files given), each
with its own pool (the deal file's initial_receivable_count receivables, or --receivables) and
seed. Writes each trust's files in the shelf layout (ingestion/deliveries.py): <out>/<deal_id>/
holds its Receivable Schedule, index rates, account earnings and monthly deliveries (up to the
shelf's --as-of month, when given); <out>/ the servicer's tangible net worth, for every quarter
of any trust's life."""

import argparse
import datetime as dt
import json
import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
from tqdm import tqdm

from dagster_project.business_calendar import PaymentPeriod, payment_periods
from dagster_project.deal import DEFAULT_DEAL_FILE, PROJECT_ROOT, Deal, load_deal, load_shelf
from dagster_project.generator import market_inputs
from dagster_project.generator.ex102_writer import Ex102TapeWriter
from dagster_project.generator.performance import simulate
from dagster_project.generator.sample_trusts import shelf_of
from dagster_project.generator.schedule import build_schedule
from dagster_project.generator.writers import write_delivery, write_frame, write_schedule

DEFAULT_OUT = PROJECT_ROOT / "data" / "sample"
DEFAULT_SEED = 20151028  # the Closing Date of 2015-4


def generate(
    out: Path,
    receivables: int | None = None,
    seed: int = DEFAULT_SEED,
    deal_file: Path | None = None,
    fmt: str = "csv",
    progress: bool = True,
) -> dict:
    """A shelf of one trust (`deal_file`, default 2015-4) into `out`."""
    return generate_shelf(
        out, [load_deal(deal_file or DEFAULT_DEAL_FILE)], receivables, seed, fmt, progress
    )


def generate_shelf(
    out: Path,
    deals: list[Deal],
    receivables: int | None = None,
    seed: int = DEFAULT_SEED,
    fmt: str = "csv",
    progress: bool = True,
    as_of: str | None = None,
) -> dict:
    """Every trust of `deals` into `out` (replacing what was there). Each trust's seed is `seed`
    plus the months between its Cutoff Date and 2015-4's (modulo 2**32): a trust's files do not
    depend on which other trusts are generated, and 2015-4's are the single-trust sample's."""
    started = time.perf_counter()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    trusts, written = [], []
    for deal in deals:
        months = (deal.cutoff_date.year - 2015) * 12 + deal.cutoff_date.month - 9
        summary, periods = _generate_trust(
            out, deal, receivables, (seed + months) % 2**32, fmt, progress, as_of
        )
        trusts.append(summary)
        written += periods
    if written:
        first = min(p.distribution_date for p in written)
        last = max(p.distribution_date for p in written)
        write_frame(
            market_inputs.tangible_net_worth_frame(first, last), out / "tangible_net_worth.csv", ()
        )
    summary = {
        "trusts": trusts,
        "as_of": as_of,
        "format": fmt,
        "seconds": round(time.perf_counter() - started, 1),
    }
    (out / "generation.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _generate_trust(
    out: Path,
    deal: Deal,
    receivables: int | None,
    seed: int,
    fmt: str,
    progress: bool,
    as_of: str | None,
) -> tuple[dict, list[PaymentPeriod]]:
    receivables = receivables or deal.initial_receivable_count
    if receivables <= 0:
        raise SystemExit(
            f"{deal.path}: no pool size to generate: set pool.initial_receivable_count "
            "or give --receivables"
        )
    rng = np.random.default_rng(seed)
    trust = out / deal.deal_id
    schedule = build_schedule(deal, receivables, rng)
    # EX-102 covers the monthly tapes only: the schedule of an XML deal stays a CSV
    write_schedule(schedule.frame, trust / f"receivable_schedule.{'csv' if fmt == 'xml' else fmt}")
    ex102 = Ex102TapeWriter(schedule.frame) if fmt == "xml" else None

    periods = [p for p in payment_periods(deal) if as_of is None or p.collection_period <= as_of]
    collections: dict[str, Decimal] = {}
    written = []
    bar = tqdm(
        total=len(periods),
        desc=f"generating {deal.deal_id}",
        unit="period",
        disable=not progress,
        file=sys.stderr,
    )
    for tape in simulate(deal, schedule, periods, rng):
        folder = trust / "deliveries" / tape.period.collection_period
        if ex102:
            ex102.write(tape, folder)  # EX-102 has no transaction file
        else:
            write_delivery(tape, folder, fmt)
        collections[tape.period.collection_period] = Decimal(
            int(
                tape.transactions.loc[
                    tape.transactions["transactionType"] == "payment", "transactionAmount"
                ].sum()
            )
        ).scaleb(-2)
        written.append(tape.period)
        bar.update(1)
    bar.close()

    rates = market_inputs.index_rate_frame(deal, written)
    write_frame(rates, trust / "index_rates.csv", ())
    write_frame(
        market_inputs.account_earnings_frame(deal, written, rates, collections),
        trust / "trust_account_earnings.csv",
        (),
    )

    # Ground truth for the data-quality tests; the pipeline never reads this folder.
    ids = schedule.frame["receivable_id"].to_numpy()
    manifest = [
        {
            "receivable_id": str(ids[b["row"]]),
            **{k: b[k] for k in ("representation", "kind", "rule")},
        }
        for b in schedule.breaches
    ]
    truth = trust / "ground_truth"
    truth.mkdir()
    (truth / "breach_manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    summary = {
        "deal_id": deal.deal_id,
        "seed": seed,
        "receivables": receivables,
        "periods": len(written),
    }
    return summary, written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--deal",
        type=Path,
        action="append",
        help="a trust's deal file, repeatable (default: every deal file of the shelf)",
    )
    parser.add_argument(
        "--trusts",
        type=int,
        default=None,
        help="a shelf of N trusts: 2015-4, the shelf's other deal files, then sample trusts "
        "issued a quarter apart (their deal files go to --deals-out)",
    )
    parser.add_argument(
        "--deals-out",
        type=Path,
        default=None,
        help="where --trusts writes the deal files of its shelf (default: <out>-deals); run the "
        "pipeline with CAOT_DEALS_DIR set to it",
    )
    parser.add_argument(
        "--receivables",
        type=int,
        default=None,
        help="pool size of each trust (default: each deal file's initial_receivable_count)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--as-of",
        type=_month,
        default=None,
        help="the shelf's last Collection Period (YYYY-MM): no trust has deliveries after it",
    )
    parser.add_argument(
        "--format",
        choices=("csv", "parquet", "xml"),
        default="csv",
        help="delivery format; xml writes the tapes as SEC EX-102 asset-level data",
    )
    parser.add_argument(
        "--if-absent",
        action="store_true",
        help="do nothing when the output folder already holds a generated shelf",
    )
    args = parser.parse_args(argv)
    if args.if_absent and (args.out / "generation.json").exists():
        print(f"sample data present in {args.out}; not regenerating")
        return 0
    if args.trusts:
        folder = args.deals_out or args.out.with_name(f"{args.out.name}-deals")
        shutil.rmtree(folder, ignore_errors=True)
        deals = shelf_of(args.trusts, load_shelf(), folder)
        print(f"{len(deals)} deal files in {folder}: run with CAOT_DEALS_DIR={folder}")
    else:
        deals = [load_deal(path) for path in args.deal] if args.deal else load_shelf()
    summary = generate_shelf(
        args.out, deals, args.receivables, args.seed, args.format, as_of=args.as_of
    )
    print(json.dumps(summary))
    return 0


def _month(text: str) -> str:
    try:
        return dt.date.fromisoformat(f"{text}-01").strftime("%Y-%m")
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a month (YYYY-MM): {text!r}") from error


if __name__ == "__main__":
    raise SystemExit(main())
