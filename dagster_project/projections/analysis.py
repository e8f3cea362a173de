"""A projection of one trust: scenarios through the pool engine and the waterfall, each class's
weighted average life, principal window and losses, and the breakeven search."""

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb

from dagster_project.business_calendar import payment_periods
from dagster_project.deal import Deal
from dagster_project.money import round_cents
from dagster_project.projections import waterfall
from dagster_project.projections.engine import Paths, PoolPeriod, pool_lines, project
from dagster_project.projections.scenarios import Scenario
from dagster_project.projections.starting_point import opening, pool_paths
from dagster_project.warehouse import insert_rows

BREAKEVEN_GRID = [Decimal(x) for x in ("0.005", "0.01", "0.02", "0.04", "0.08", "0.15", "0.25",
                                       "0.40", "0.60", "0.90")]  # fmt: skip
BREAKEVEN_ROUNDS = 3  # after the grid: each bracket cut in 5 per round (1/125 of its width)


class ProjectionError(ValueError):
    """A projection that cannot run as asked (the message says why)."""


@dataclass
class ScenarioResult:
    scenario: Scenario
    pool: list[PoolPeriod]
    dates: dict[int, dt.date]  # month -> Distribution Date
    notes: list[tuple]  # (class_id, date, principal, interest, ending balance)
    classes: list[waterfall.ClassResult]
    accounts: list[tuple] = field(default_factory=list)  # (date, reserve, OC, OC target)

    @property
    def cumulative_net_loss(self) -> Decimal:
        return sum((p.defaulted - p.recoveries for p in self.pool), Decimal(0))

    @property
    def clean_up_call_date(self) -> dt.date | None:
        called = [p for p in self.pool if p.purchased]
        return self.dates[called[0].month] if called else None


@dataclass
class Breakeven:
    class_id: str
    no_loss_cdr: Decimal | None  # the highest CDR tried with no principal loss
    loss_cdr: Decimal | None  # the lowest CDR tried with one (None: none up to the grid's top)
    cumulative_net_loss_percent: Decimal | None  # of the Initial Pool Balance, at loss_cdr


@dataclass
class ProjectionResult:
    deal: Deal
    period: str | None
    scenarios: list[ScenarioResult]
    realized_net_loss: Decimal  # before the start (the warehouse's line 76)
    breakeven_scenario: str | None = None
    breakevens: list[Breakeven] = field(default_factory=list)

    def cumulative_net_loss_percent(self, result: ScenarioResult) -> Decimal:
        total = self.realized_net_loss + result.cumulative_net_loss
        return (total * 100 / self.deal.initial_pool_balance).quantize(
            Decimal("0.01"), ROUND_HALF_UP
        )

    def summary_lines(self) -> list[str]:
        out = []
        for result in self.scenarios:
            out.append(
                f"{result.scenario.name}: clean-up call {result.clean_up_call_date or 'not'}; "
                f"cumulative net loss {self.cumulative_net_loss_percent(result)}%"
            )
            for c in result.classes:
                out.append(
                    f"  {c.class_id:6} WAL {c.weighted_average_life} years, principal "
                    f"{c.first_principal_date} to {c.last_principal_date}"
                    + (f", LOSS {c.principal_loss}" if c.principal_loss else "")
                )
        for b in self.breakevens:
            out.append(
                f"breakeven {b.class_id}: no loss at CDR {b.no_loss_cdr}, loss at CDR "
                f"{b.loss_cdr} (cumulative net loss {b.cumulative_net_loss_percent}%)"
            )
        return out

    def write(self, path: Path) -> None:
        """The results as tables keyed by scenario (schema `projection`), replaced whole."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        con = duckdb.connect(str(path))
        try:
            _write_tables(con, self)
        finally:
            con.close()


def run_projection(
    warehouse: Path,
    deal: Deal,
    scenarios: list[Scenario],
    period: str | None = None,
    breakeven: str | None = None,
) -> ProjectionResult:
    if not warehouse.exists():
        raise ProjectionError(f"{warehouse}: no published warehouse (run `make run` first)")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        paths = pool_paths(con, deal, period)
        start = opening(con, deal, period)
        realized = Decimal(0)
        if period is not None:
            row = con.execute(
                "select amount from marts.rpt_servicer_certificate where deal_id = ? and "
                "key = 'cumulative_net_losses_amount' and distribution_date = ?",
                [deal.deal_id, start.settlement_date],  # the starting Distribution Date
            ).fetchone()
            realized = Decimal(row[0]) if row and row[0] is not None else Decimal(0)
    finally:
        con.close()
    result = ProjectionResult(deal, period, _run(deal, start, paths, scenarios), realized)
    if breakeven:
        base = [s for s in scenarios if s.name == breakeven]
        if not base:
            raise ProjectionError(f"no scenario named {breakeven!r} to search the breakeven of")
        result.breakeven_scenario = breakeven
        result.breakevens = _breakevens(deal, start, paths, base[0], result)
    return result


def _run(deal, start, paths: Paths, scenarios: list[Scenario]) -> list[ScenarioResult]:
    call = round_cents(deal.initial_pool_balance * deal.clean_up_call_percent)
    projected = {s.name: pool_lines(project(paths, s), s, call) for s in scenarios}
    notes = waterfall.run(deal, start, projected)
    calendar = {p.period_number: p.distribution_date for p in payment_periods(deal)}
    out = []
    for s in scenarios:
        pool = projected[s.name]
        dates = {p.month: calendar.get(start.period_number + p.month) for p in pool}
        rows = notes[s.name]["notes"]
        classes = waterfall.class_results(deal, start, rows)
        out.append(ScenarioResult(s, pool, dates, rows, classes, notes[s.name]["deal"]))
    return out


def _breakevens(deal, start, paths, base: Scenario, result: ProjectionResult) -> list[Breakeven]:
    """For each class, bracket the lowest CDR at which it takes a principal loss: a grid, then
    each class's bracket cut in five, BREAKEVEN_ROUNDS times; every round is one engine pass and
    one dbt build for all the rates it tries."""
    tried: dict[Decimal, ScenarioResult] = {}

    def try_rates(rates: set[Decimal]) -> None:
        new = sorted(r for r in rates if r not in tried)
        scenarios = [base.with_cdr(r, f"{base.name}~cdr{r}") for r in new]
        for rate, outcome in zip(new, _run(deal, start, paths, scenarios), strict=True):
            tried[rate] = outcome

    def loses(rate: Decimal, class_id: str) -> bool:
        return any(c.principal_loss > 0 for c in tried[rate].classes if c.class_id == class_id)

    def bracket(class_id: str) -> tuple[Decimal | None, Decimal | None]:
        rates = sorted(tried)
        losing = [r for r in rates if loses(r, class_id)]
        low = max((r for r in rates if not loses(r, class_id) and (not losing or r < losing[0])),
                  default=None)  # fmt: skip
        return low, (losing[0] if losing else None)

    try_rates(set(BREAKEVEN_GRID) | {Decimal(0)})
    for _round in range(BREAKEVEN_ROUNDS):
        inside = set()
        for c in deal.classes:
            low, high = bracket(c.class_id)
            if low is not None and high is not None:
                step = (high - low) / 5
                inside |= {(low + step * k).quantize(Decimal("0.00001")) for k in range(1, 5)}
        if not inside:
            break
        try_rates(inside)
    out = []
    for c in deal.classes:
        low, high = bracket(c.class_id)
        percent = result.cumulative_net_loss_percent(tried[high]) if high is not None else None
        out.append(Breakeven(c.class_id, low, high, percent))
    return out


def _write_tables(con, result: ProjectionResult) -> None:
    deal_id = result.deal.deal_id
    con.execute("create schema projection")
    con.execute(
        "create table projection.dim_scenario (deal_id varchar, scenario varchar, "
        "prepayment varchar, prepayment_rate decimal(12, 9), cdr decimal(12, 9), "
        "severity decimal(12, 9), recovery_lag_months integer, clean_up_call boolean, "
        "start_period varchar)"
    )
    con.execute(
        "create table projection.fct_projected_pool (deal_id varchar, scenario varchar, "
        "month integer, distribution_date date, beginning_pool_balance decimal(18, 2), "
        "principal_collections_amount decimal(18, 2), purchase_principal_amount decimal(18, 2), "
        "defaulted_receivables_amount decimal(18, 2), ending_pool_balance decimal(18, 2), "
        "receivables_outstanding bigint, finance_charge_collections_amount decimal(18, 2), "
        "liquidation_proceeds_amount decimal(18, 2))"
    )
    con.execute(
        "create table projection.fct_projected_note (deal_id varchar, scenario varchar, "
        "class_id varchar, distribution_date date, principal_paid_amount decimal(18, 2), "
        "interest_paid_amount decimal(18, 2), ending_balance decimal(18, 2))"
    )
    con.execute(
        "create table projection.fct_projected_accounts (deal_id varchar, scenario varchar, "
        "distribution_date date, reserve_account_balance decimal(18, 2), "
        "overcollateralization_amount decimal(18, 2), "
        "overcollateralization_target_amount decimal(18, 2))"
    )
    con.execute(
        "create table projection.rpt_projected_class (deal_id varchar, scenario varchar, "
        "class_id varchar, weighted_average_life_years decimal(8, 2), first_principal_date "
        "date, last_principal_date date, principal_loss_amount decimal(18, 2), "
        "clean_up_call_date date, cumulative_net_loss_percent decimal(8, 2))"
    )
    con.execute(
        "create table projection.rpt_breakeven (deal_id varchar, scenario varchar, class_id "
        "varchar, highest_cdr_without_loss decimal(12, 9), lowest_cdr_with_loss decimal(12, 9), "
        "cumulative_net_loss_percent decimal(8, 2))"
    )
    for r in result.scenarios:
        s = r.scenario
        con.execute(
            "insert into projection.dim_scenario values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [deal_id, s.name, s.prepayment, s.prepayment_rate, s.cdr, s.severity,
             s.recovery_lag_months, s.clean_up_call, result.period or "cutoff"],
        )  # fmt: skip
        insert_rows(
            con,
            "projection.fct_projected_pool",
            [[deal_id, s.name, p.month, r.dates[p.month], p.beginning, p.principal, p.purchased,
              p.defaulted, p.ending, p.receivables, p.interest, p.recoveries] for p in r.pool],
        )  # fmt: skip
        insert_rows(
            con, "projection.fct_projected_note", [[deal_id, s.name, *row] for row in r.notes]
        )
        insert_rows(
            con,
            "projection.fct_projected_accounts",
            [[deal_id, s.name, *row] for row in r.accounts],
        )
        insert_rows(
            con,
            "projection.rpt_projected_class",
            [[deal_id, s.name, c.class_id, c.weighted_average_life, c.first_principal_date,
              c.last_principal_date, c.principal_loss, r.clean_up_call_date,
              result.cumulative_net_loss_percent(r)] for c in r.classes],
        )  # fmt: skip
    for b in result.breakevens:
        con.execute(
            "insert into projection.rpt_breakeven values (?, ?, ?, ?, ?, ?)",
            [deal_id, result.breakeven_scenario, b.class_id, b.no_loss_cdr, b.loss_cdr,
             b.cumulative_net_loss_percent],
        )  # fmt: skip
