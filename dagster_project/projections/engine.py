"""Project every receivable of a pool under a scenario, month by month, in DuckDB's DECIMAL.

Each receivable keeps paying its contractual level payment (the Receivable Schedule's scheduled
payment) on the share of it still performing. In month t, for a receivable of age a (months since
its first payment was due at the start), all in DECIMAL(38, 12) with factors to 15 places:

    defaulted  = balance x MDR                   MDR = 1 - (1 - CDR)^(1/12)
    performing = balance - defaulted
    interest   = performing x APR/12
    scheduled  = payment x (1 - MDR) - interest, between 0 and performing (all of it in the
                 last month of the term)
    prepaid    = (performing - scheduled) x SMM  SMM = ABS / (1 - ABS x (a + t - 1)), the ABS
                 convention (a share of the original number of receivables); or from a CPR
    balance'   = performing - scheduled - prepaid; payment' = payment x (1 - MDR) x (1 - SMM)

so a pool of identical receivables at a fixed ABS speed keeps N0 x (1 - ABS x t) receivables, each
on its scheduled balance: the closed form the prospectus tables assume. A defaulted balance is
recovered, less the severity, `recovery_lag_months` later. The pool's totals are summed exactly and
rounded half up to the cent once per period (pool_lines); nothing is floating point: DuckDB's
division would be, so every rate that needs one (MDR, SMM, APR/12) is computed in Python's
Decimal and multiplied in SQL.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext

from dagster_project.projections.scenarios import Scenario

AMOUNT = "decimal(38, 12)"
FACTOR = "decimal(18, 15)"
PLACES = Decimal("0.000000000000001")  # factors: 15 places
CENT = Decimal("0.01")


@dataclass(frozen=True)
class ProjectedMonth:
    month: int  # 1 = the first Collection Period after the start
    beginning: Decimal
    interest: Decimal
    scheduled: Decimal
    prepaid: Decimal
    defaulted: Decimal
    ending: Decimal
    receivables: Decimal  # expected number outstanding at the month end


def monthly_default_rate(cdr: Decimal) -> Decimal:
    """MDR from an annual CDR: 1 - (1 - CDR)^(1/12), to 15 places."""
    with localcontext() as context:
        context.prec = 34
        return (1 - (1 - cdr) ** (Decimal(1) / 12)).quantize(PLACES, ROUND_HALF_UP)


def monthly_prepayment_rate(scenario: Scenario, age: int) -> Decimal:
    """SMM of a receivable in its `age`-th month (age 1 = its first payment month)."""
    with localcontext() as context:
        context.prec = 34
        rate = scenario.prepayment_rate
        if scenario.prepayment == "cpr":
            smm = 1 - (1 - rate) ** (Decimal(1) / 12)
        else:
            remaining = 1 - rate * (max(age, 1) - 1)
            smm = Decimal(1) if remaining <= rate else rate / remaining
        return min(smm, Decimal(1)).quantize(PLACES, ROUND_HALF_UP)


STEP = f"""
create or replace temp table projected as
with rated as (
    select
        receivable.scenario, receivable.receivable_id, receivable.monthly_rate, receivable.age,
        receivable.remaining, receivable.balance, receivable.payment, receivable.count,
        coalesce(rates.smm, 1)::{FACTOR} as smm, scenario_rates.mdr
    from projected as receivable
    inner join scenario_rates using (scenario)
    left join smm_by_age as rates
        on rates.scenario = receivable.scenario and rates.age = receivable.age + $month
    where receivable.balance > 0
),
defaults as (
    select *, (balance * mdr)::{AMOUNT} as defaulted from rated
),
performing as (
    select *, balance - defaulted as performing_balance,
        (payment * (1 - mdr))::{AMOUNT} as due,
        (count * (1 - mdr))::{AMOUNT} as performing_count
    from defaults
),
interest as (
    select *, (performing_balance * monthly_rate)::{AMOUNT} as interest from performing
),
scheduled as (
    select *, case when remaining <= 1 then performing_balance
        else least(performing_balance, greatest(due - interest, 0)) end as scheduled
    from interest
),
prepaid as (
    select *, ((performing_balance - scheduled) * smm)::{AMOUNT} as prepaid from scheduled
)
select
    scenario, receivable_id, monthly_rate, age, remaining - 1 as remaining,
    performing_balance - scheduled - prepaid as balance,
    (due * (1 - smm))::{AMOUNT} as payment,
    case when remaining <= 1 then 0 else (performing_count * (1 - smm))::{AMOUNT} end as count,
    balance as beginning, interest, scheduled, prepaid, defaulted
from prepaid
"""

TOTALS = """
select scenario, sum(beginning), sum(interest), sum(scheduled), sum(prepaid), sum(defaulted),
    sum(balance), sum(count)
from projected group by scenario
"""


def project(
    con, pool_sql: str, scenarios: list[Scenario], params: dict | None = None
) -> dict[str, list[ProjectedMonth]]:
    """Project the pool that `pool_sql` selects (receivable_id, apr, remaining_term, age,
    balance, payment: one row per receivable) under every scenario at once, until it is paid
    down or its last term ends; per scenario name, one ProjectedMonth per month, unrounded."""
    con.execute(
        "create or replace temp table scenario_rates (scenario varchar, mdr " + FACTOR + ")"
    )
    con.executemany(
        "insert into scenario_rates values (?, ?)",
        [(s.name, monthly_default_rate(s.cdr)) for s in scenarios],
    )
    con.execute(
        f"create or replace temp table projected as select scenario, receivable_id, "
        f"(apr * {Decimal(1) / 12:.18f})::{FACTOR} as monthly_rate, age::integer as age, "
        f"remaining_term::integer as remaining, balance::{AMOUNT} as balance, "
        f"payment::{AMOUNT} as payment, 1::{AMOUNT} as count "
        f"from ({pool_sql}) cross join scenario_rates where balance > 0",
        params or {},
    )
    longest, oldest = con.execute("select max(remaining), max(age) from projected").fetchone()
    if longest is None:
        return {s.name: [] for s in scenarios}
    con.execute(
        f"create or replace temp table smm_by_age (scenario varchar, age integer, smm {FACTOR})"
    )
    con.executemany(
        "insert into smm_by_age values (?, ?, ?)",
        [
            (s.name, age, monthly_prepayment_rate(s, age))
            for s in scenarios
            for age in range(1, oldest + longest + 2)
        ],
    )
    months: dict[str, list[ProjectedMonth]] = {s.name: [] for s in scenarios}
    for month in range(1, longest + 1):
        con.execute(STEP, {"month": month})
        for name, *totals in con.execute(TOTALS).fetchall():
            months[name].append(ProjectedMonth(month, *totals))
        if not con.execute("select count(*) from projected where balance > 0").fetchone()[0]:
            break
    return months


@dataclass(frozen=True)
class PoolPeriod:
    """One projected Collection Period as the certificate's pool lines, in cents."""

    month: int
    beginning: Decimal  # line 1
    principal: Decimal  # lines 2 and 18a: scheduled and prepaid principal
    purchased: Decimal  # lines 3 and 18c: the clean-up call's Purchase Amount
    defaulted: Decimal  # line 4
    ending: Decimal  # line 5
    receivables: int  # line 6
    interest: Decimal  # line 17a
    recoveries: Decimal  # line 18b: Liquidation Proceeds of earlier defaults


def pool_lines(
    months: list[ProjectedMonth],
    scenario: Scenario,
    call_balance: Decimal | None,
) -> list[PoolPeriod]:
    """The projected months in cents, each total rounded half up once (the pool roll-forward
    is kept exact: principal = beginning - defaulted - ending, so a rounding cent lands in the
    principal collections). `call_balance`: the clean-up call (9.1(a)) is exercised on the first
    month whose ending balance is at or below it (the servicer buys the pool at that balance;
    the projection ends); None when it is off. Recoveries of defaults still due after the last
    month are dropped with the pool."""

    def cents(value: Decimal) -> Decimal:
        return value.quantize(CENT, ROUND_HALF_UP)

    recovered = {
        m.month + scenario.recovery_lag_months: m.defaulted * (1 - scenario.severity)
        for m in months
    }
    out = []
    for m in months:
        beginning, ending, defaulted = cents(m.beginning), cents(m.ending), cents(m.defaulted)
        called = scenario.clean_up_call and call_balance is not None and ending <= call_balance
        count = int(m.receivables.quantize(Decimal(1), ROUND_HALF_UP))
        out.append(
            PoolPeriod(
                month=m.month,
                beginning=beginning,
                principal=beginning - defaulted - ending,
                purchased=ending if called else Decimal("0.00"),
                defaulted=defaulted,
                ending=Decimal("0.00") if called else ending,
                receivables=0 if called else count,
                interest=cents(m.interest),
                recoveries=cents(recovered.get(m.month, Decimal(0))),
            )
        )
        if called:
            break
    return out
