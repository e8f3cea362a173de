"""Calibration figures of a generated deal, read back from its files (for tests and notes)."""

import json
import sys
from pathlib import Path

import duckdb


def calibration(folder: Path) -> dict:
    con = duckdb.connect()
    try:
        ext = "parquet" if (folder / "receivable_schedule.parquet").exists() else "csv"
        schedule = f"'{folder}/receivable_schedule.{ext}'"
        status = f"'{folder}/deliveries/*/loan_status.{ext}'"
        pool = con.execute(f"""
            select count(*), sum(principal_balance::decimal(18, 2)),
                   sum(principal_balance) filter (where vehicle_new_used = 'used')
                   / sum(principal_balance),
                   sum(remaining_term * principal_balance) / sum(principal_balance),
                   sum(original_term * principal_balance) / sum(principal_balance),
                   sum(apr * principal_balance) / sum(principal_balance)
            from {schedule}""").fetchone()
        periods = con.execute(f"""
            with p as (
                select reportingPeriodEndingDate as period_end,
                       sum(reportingPeriodBeginningLoanBalanceAmount) as begin_balance,
                       sum(actualPrincipalCollectedAmount + rebateAmount) as principal,
                       sum(chargedoffPrincipalAmount) as defaults,
                       sum(recoveredAmount - liquidationExpenseAmount) as recoveries,
                       sum(reportingPeriodActualEndBalanceAmount) filter (
                           where currentDelinquencyStatus >= 31) as dq31,
                       sum(reportingPeriodActualEndBalanceAmount) as end_balance
                from {status} group by 1)
            select period_end, principal / begin_balance, defaults / begin_balance,
                   coalesce(dq31, 0) / nullif(end_balance, 0), defaults, recoveries, end_balance
            from p where begin_balance > 0 order by 1""").fetchall()
    finally:
        con.close()
    balance = float(pool[1])
    defaults = sum(float(r[4]) for r in periods)
    recoveries = sum(float(r[5]) for r in periods)
    first_year = [r for r in periods[:12]]
    return {
        "receivables": pool[0],
        "pool_balance": str(pool[1]),
        "used_share_of_balance": round(float(pool[2]), 4),
        "wa_remaining_term": round(float(pool[3]), 2),
        "wa_original_term": round(float(pool[4]), 2),
        "wa_apr_percent": round(100 * float(pool[5]), 2),
        "periods_with_balance": len(periods),
        "principal_collections_pct_range_first_year": [
            round(100 * min(float(r[1]) for r in first_year), 2),
            round(100 * max(float(r[1]) for r in first_year), 2),
        ],
        "principal_collections_pct_median": round(
            100 * sorted(float(r[1]) for r in periods)[len(periods) // 2], 2
        ),
        "monthly_default_pct_median": round(
            100 * sorted(float(r[2]) for r in periods)[len(periods) // 2], 3
        ),
        "delinquency_31plus_pct_median": round(
            100 * sorted(float(r[3] or 0) for r in periods)[len(periods) // 2], 2
        ),
        "cumulative_gross_default_pct": round(100 * defaults / balance, 2),
        "cumulative_net_loss_pct": round(100 * (defaults - recoveries) / balance, 2),
        "recovery_rate_pct": round(100 * recoveries / defaults, 1) if defaults else None,
    }


if __name__ == "__main__":
    print(json.dumps(calibration(Path(sys.argv[1])), indent=2))
