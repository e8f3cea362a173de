"""Projected pool lines through the certificate's own waterfall, and what each class receives.

The projected Collection Periods become the pool lines of projected certificates (lines 1-6,
17a-c, 18a-c and the floating index, line 15), the state before the first one comes from the
warehouse (the note balances, reserve and unpaid amounts after the starting Distribution Date), and
the dbt waterfall models run on them in reconciliation mode (dagster_project.reconcile): the same
models that compute every published certificate, one build for every scenario (each a trust of its
own in the scratch warehouse, `<deal_id>@<scenario>`).
"""

import dataclasses
import datetime as dt
import tempfile
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.certificate_layout import certificate_layout
from dagster_project.deal import Deal
from dagster_project.ingestion.deal_tables import load_deal_tables
from dagster_project.projections.engine import PoolPeriod
from dagster_project.reconcile import build_inputs, load_reported_tables, run_waterfall_models

SEPARATOR = "@"
DAYS_A_YEAR = Decimal(365)


@dataclasses.dataclass(frozen=True)
class Opening:
    """The trust after the starting Distribution Date (period_number 0: the Closing Date)."""

    period_number: int
    note_balances: dict[str, Decimal]
    unpaid_interest: dict[str, Decimal]
    reserve_balance: Decimal
    servicing_fee_unpaid: Decimal
    index_rate: Decimal  # the floating index held flat over the projection (a fraction)
    settlement_date: dt.date  # WAL is measured from it


def scenario_deal(deal: Deal, scenario_name: str) -> Deal:
    return dataclasses.replace(deal, deal_id=f"{deal.deal_id}{SEPARATOR}{scenario_name}")


def reported_lines(
    deal: Deal, opening: Opening, periods: list[PoolPeriod]
) -> dict[dt.date, dict[str, str]]:
    """{Distribution Date: {line: value}} of the projected certificates, as reconciliation mode
    reads published ones (the line ids of the deal's certificate form)."""
    line_of: dict[str, str] = {}
    for line in certificate_layout(deal):
        line_of.setdefault(line.key, line.line)
    calendar = {p.period_number: p for p in payment_periods(deal)}
    out: dict[dt.date, dict[str, str]] = {}
    for period in periods:
        number = opening.period_number + period.month
        if number not in calendar:
            break  # past the Final Scheduled Maturity Date
        values = {
            "beginning_pool_balance": period.beginning,
            "principal_collections_amount": period.principal,
            "purchase_principal_amount": period.purchased,
            "defaulted_receivables_amount": period.defaulted,
            "ending_pool_balance": period.ending,
            "receivables_outstanding": period.receivables,
            "finance_charge_collections_amount": period.interest,
            "liquidation_principal_amount": period.recoveries,
            "index_rate": opening.index_rate * 100,  # printed as a percent
        }
        if period.month == 1 and opening.period_number > 0:
            for class_id, balance in opening.note_balances.items():
                values[f"class_balance_begin:{class_id}"] = balance
            for class_id, unpaid in opening.unpaid_interest.items():
                values[f"additional_note_interest:{class_id}"] = unpaid
            values["reserve_account_beginning_balance"] = opening.reserve_balance
            values["servicing_fee_unpaid_prior_amount"] = opening.servicing_fee_unpaid
        out[calendar[number].distribution_date] = {
            line_of[key]: str(value) for key, value in values.items() if key in line_of
        }
    return out


def run(deal: Deal, opening: Opening, projected: dict[str, list[PoolPeriod]]) -> dict:
    """Every scenario's projected certificates through the waterfall, in one dbt build. Returns,
    per scenario name, {"notes": [(class_id, date, principal, interest, ending balance)],
    "deal": [(date, reserve ending balance, overcollateralization, its target)]}."""
    prepared = []
    for name, periods in projected.items():
        pseudo = scenario_deal(deal, name)
        rows, opening_rows, _assumed = build_inputs(
            pseudo, reported_lines(pseudo, opening, periods)
        )
        prepared.append((name, pseudo, rows, opening_rows))
    with tempfile.TemporaryDirectory(prefix="projection-") as scratch:
        database = Path(scratch) / "projection.duckdb"
        con = duckdb.connect(str(database))
        load_deal_tables(con, [pseudo for _name, pseudo, *_ in prepared])
        load_reported_tables(
            con,
            [row for *_, rows, _opening in prepared for row in rows],
            [row for *_, opening_rows in prepared for row in opening_rows],
        )
        con.close()
        run_waterfall_models(
            database, Path(scratch), ("+fct_note_distribution", "+fct_distribution_date")
        )
        con = duckdb.connect(str(database), read_only=True)
        out = {}
        for name, pseudo, *_ in prepared:
            out[name] = {
                "notes": con.execute(
                    "select class_id, distribution_date, principal_paid_amount, "
                    "interest_paid_amount, ending_balance from marts.fct_note_distribution "
                    "where deal_id = ? order by distribution_date, class_id",
                    [pseudo.deal_id],
                ).fetchall(),
                "deal": con.execute(
                    "select distribution_date, reserve_account_ending_balance, "
                    "overcollateralization_amount, overcollateralization_target_amount "
                    "from marts.fct_distribution_date where deal_id = ? order by 1",
                    [pseudo.deal_id],
                ).fetchall(),
            }
        con.close()
    return out


@dataclasses.dataclass(frozen=True)
class ClassResult:
    class_id: str
    weighted_average_life: Decimal | None  # years from the settlement date, 2 places
    first_principal_date: dt.date | None
    last_principal_date: dt.date | None
    principal_loss: Decimal  # the note balance left when the projection ends


def class_results(deal: Deal, opening: Opening, notes: list[tuple]) -> list[ClassResult]:
    """Per class: the weighted average life (the years from the settlement date to each
    principal payment, actual days / 365, weighted by the payment; rounded half up to 2 places),
    the principal window, and the balance never repaid."""
    out = []
    for note_class in deal.classes:
        rows = [r for r in notes if r[0] == note_class.class_id]
        paid = [(date, principal) for _c, date, principal, _i, _e in rows if principal > 0]
        total = sum((p for _d, p in paid), Decimal(0))
        wal = (
            (
                sum((p * Decimal((d - opening.settlement_date).days) for d, p in paid), Decimal(0))
                / total
                / DAYS_A_YEAR
            ).quantize(Decimal("0.01"), ROUND_HALF_UP)
            if total
            else None
        )
        out.append(
            ClassResult(
                note_class.class_id,
                wal,
                paid[0][0] if paid else None,
                paid[-1][0] if paid else None,
                rows[-1][4] if rows else opening.note_balances.get(note_class.class_id, 0),
            )
        )
    return out
