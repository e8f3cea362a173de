"""Generate the sample deal: `python -m dagster_project.generator [--receivables N] [--seed S]`.

Writes the trust's files in the shelf layout (ingestion/deliveries.py): <out>/<deal_id>/ holds its
Receivable Schedule, index rates, account earnings and monthly deliveries; <out>/ the servicer's
tangible net worth."""

import argparse
import json
import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
from tqdm import tqdm

from dagster_project.business_calendar import payment_periods
from dagster_project.deal import DEFAULT_DEAL_FILE, PROJECT_ROOT, load_deal
from dagster_project.generator import market_inputs
from dagster_project.generator.ex102_writer import Ex102TapeWriter
from dagster_project.generator.performance import simulate
from dagster_project.generator.schedule import build_schedule
from dagster_project.generator.writers import write_delivery, write_frame, write_schedule

DEFAULT_OUT = PROJECT_ROOT / "data" / "sample"
DEFAULT_SEED = 20151028  # the Closing Date


def generate(
    out: Path,
    receivables: int | None = None,
    seed: int = DEFAULT_SEED,
    deal_file: Path | None = None,
    fmt: str = "csv",
    progress: bool = True,
) -> dict:
    deal = load_deal(deal_file or DEFAULT_DEAL_FILE)
    receivables = receivables or deal.initial_receivable_count
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    trust = out / deal.deal_id
    schedule = build_schedule(deal, receivables, rng)
    # EX-102 covers the monthly tapes only: the schedule of an XML deal stays a CSV
    write_schedule(schedule.frame, trust / f"receivable_schedule.{'csv' if fmt == 'xml' else fmt}")
    ex102 = Ex102TapeWriter() if fmt == "xml" else None

    periods = payment_periods(deal)
    collections: dict[str, Decimal] = {}
    written = []
    bar = tqdm(
        total=len(periods),
        desc="generating tapes",
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
        market_inputs.tangible_net_worth_frame(deal, written), out / "tangible_net_worth.csv", ()
    )
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
        "format": fmt,
        "seconds": round(time.perf_counter() - started, 1),
    }
    (out / "generation.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--receivables",
        type=int,
        default=None,
        help="pool size (default: the deal file's initial_receivable_count)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--deal", type=Path, default=None, help="deal file (default: 2015-4)")
    parser.add_argument(
        "--format",
        choices=("csv", "parquet", "xml"),
        default="csv",
        help="delivery format; xml writes the tapes as SEC EX-102 asset-level data",
    )
    parser.add_argument(
        "--if-absent",
        action="store_true",
        help="do nothing when the output folder already holds a generated deal",
    )
    args = parser.parse_args(argv)
    if args.if_absent and (args.out / "generation.json").exists():
        print(f"sample data present in {args.out}; not regenerating")
        return 0
    summary = generate(args.out, args.receivables, args.seed, args.deal, args.format)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
