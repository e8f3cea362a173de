"""The auditor's exceptions, each with a lifecycle that is kept.

Every finding is one exception with a stable id, the rule, the receivable or period and field,
the value found, the value expected, the tolerance, and a status with the date it took it:

- a Section 2.3 breach (marts.fct_eligibility_exception): open from its discovery (the Closing
  Date), repurchased under 2.4 on the Distribution Date of its Purchase Amount
  (marts.fct_repurchase), or closed when the receivable paid off or defaulted before the
  repurchase fell due;
- a failed servicing criterion (quality.expectation_failures of the servicing suite): open from
  the period's Distribution Date;
- a tape-versus-recomputed balance difference (marts.rpt_reconciliation_aging): open when it
  appeared, cured in the period whose tape agrees again;
- a rejected delivery (raw.deliveries): open from its load attempt, cured when a later delivery
  of the same file is loaded;
- the servicer's decisions (raw.exception_decisions, <inputs>/<deal_id>/exception_decisions.csv):
  waived (with the reason and who decided) or reopened, on the date decided.

An exception a build no longer finds, still open, is cured on that build's date. Events are only
ever added (quality.audit_exception_history), so the history of an exception reads back; the
register (quality.audit_exceptions) holds each exception's attributes and current status.
Rebuilding with the same data adds nothing.
"""

import datetime as dt
from dataclasses import dataclass, field

from dagster_project.reports.document import display
from dagster_project.warehouse import insert_rows, table_exists

DDL = """
create schema if not exists quality;
create table if not exists quality.audit_exceptions (
    deal_id varchar, exception_id varchar, kind varchar, rule varchar, receivable_id varchar,
    collection_period varchar, field varchar, value_found varchar, value_expected varchar,
    tolerance varchar, opened_on date, status varchar, status_on date, status_detail varchar
);
create table if not exists quality.audit_exception_history (
    deal_id varchar, exception_id varchar, event_on date, status varchar, detail varchar,
    recorded_at timestamptz
);
"""
OPEN_STATES = ("open", "reopened")


@dataclass
class Finding:
    deal_id: str
    exception_id: str
    kind: str
    rule: str
    receivable_id: str | None
    collection_period: str | None
    field: str
    value_found: str
    value_expected: str
    tolerance: str
    events: list[tuple[dt.date, str, str]] = field(default_factory=list)  # (on, status, detail)


ELIGIBILITY = """
select e.deal_id, e.receivable_id, e.representation, e.expectation_name, e.observed_value,
    e.rule_text, coalesce(r.tolerance_text, '') as tolerance, e.discovered_date,
    p.repurchase_status, p.purchase_amount, p.distribution_date, p.collection_period
from marts.fct_eligibility_exception as e
left join quality.expectation_results as r
    on r.deal_id = e.deal_id and r.suite_name = e.suite_name
    and r.expectation_name = e.expectation_name
left join marts.fct_repurchase as p on p.deal_id = e.deal_id and p.receivable_id = e.receivable_id
order by all
"""

SERVICING = """
select split_part(f.failing_id, '/', 1) as deal_id, split_part(f.failing_id, '/', 2) as period,
    f.representation, f.expectation_name, f.observed_value, r.rule_text,
    coalesce(r.tolerance_text, '') as tolerance, c.distribution_date
from quality.expectation_failures as f
inner join quality.expectation_results as r
    on r.deal_id = f.deal_id and r.suite_name = f.suite_name
    and r.expectation_name = f.expectation_name
inner join staging.stg_deal__payment_calendar as c
    on c.deal_id = split_part(f.failing_id, '/', 1)
    and c.collection_period = split_part(f.failing_id, '/', 2)
where f.suite_name = $suite
order by all
"""

BALANCES = """
select deal_id, receivable_id, figure, first_collection_period, first_difference_amount,
    appeared_on, resolved_collection_period, resolved_on
from marts.rpt_reconciliation_aging
order by all
"""

DELIVERIES = """
select rejected.deal_id, rejected.file_kind, rejected.scope, rejected.sha256,
    rejected.first_finding, rejected.loaded_at::date as attempted_on,
    min(later.loaded_at)::date as replaced_on
from raw.deliveries as rejected
left join raw.deliveries as later
    on later.deal_id = rejected.deal_id and later.file_kind = rejected.file_kind
    and later.scope = rejected.scope and later.status = 'loaded'
    and later.loaded_at > rejected.loaded_at
where rejected.status = 'rejected'
group by all
order by all
"""


def _money(value) -> str:
    """An amount as the reports print it (reports/document.py)."""
    return display(None if value is None else str(value), "money")


def findings(con, servicing_suite: str) -> list[Finding]:
    """Every exception the warehouse shows now, with the events its data dates."""
    out = []
    for (deal_id, rid, rep, expectation, observed, rule, tolerance, discovered, status, amount,
         paid_on, period) in con.execute(ELIGIBILITY).fetchall():  # fmt: skip
        column = expectation.partition("(")[2].rstrip(")")
        found = Finding(deal_id, f"{rep}:{column}:{rid}", "Section 2.3 breach", rep, rid, None,
                        column, observed, rule, tolerance,
                        [(discovered, "open", "discovered")])  # fmt: skip
        if status == "repurchased":
            found.events.append(
                (paid_on, "repurchased", f"2.4: Purchase Amount {_money(amount)} ({period})")
            )
        elif status in ("paid_off_before_due", "defaulted_before_due"):
            found.events.append(
                (paid_on, "closed", f"{status.replace('_', ' ')}: no repurchase required (2.4)")
            )
        out.append(found)
    for deal_id, period, rep, expectation, observed, rule, tolerance, paid_on in con.execute(
        SERVICING, {"suite": servicing_suite}
    ).fetchall():
        column = expectation.partition("(")[2].rstrip(")")
        out.append(Finding(deal_id, f"{rep}:{column}:{period}", "servicing criterion", rep, None,
                           period, column, observed, rule, tolerance,
                           [(paid_on, "open", "failed in the build")]))  # fmt: skip
    for (deal_id, rid, figure, first, difference, appeared, resolved_period,
         resolved_on) in con.execute(BALANCES).fetchall():  # fmt: skip
        found = Finding(deal_id, f"1122(d)(4)(v):{figure}:{rid}:{first}", "balance difference",
                        "1122(d)(4)(v)", rid, first, figure,
                        f"tape less recomputed {_money(difference)}",
                        "the Simple Interest Method's balance", "$0.01",
                        [(appeared, "open", f"appeared in {first}")])  # fmt: skip
        if resolved_on is not None:
            found.events.append((resolved_on, "cured", f"the tape agrees in {resolved_period}"))
        out.append(found)
    for deal_id, kind, scope, sha, finding, attempted, replaced in con.execute(
        DELIVERIES
    ).fetchall():
        found = Finding(deal_id, f"quarantine:{kind}:{scope}:{sha[:12]}", "rejected delivery",
                        "Section 3.8 / bad input", None, scope if kind != scope else None, kind,
                        finding or "", "a delivery that passes every check", "none",
                        [(attempted, "open", "rejected and quarantined")])  # fmt: skip
        if replaced is not None:
            found.events.append((replaced, "cured", "a later delivery of the file was loaded"))
        out.append(found)
    return out


def _decisions(con) -> list[tuple]:
    if not table_exists(con, "raw", "exception_decisions"):
        return []
    return con.execute(
        "select deal_id, exception_id, decided_on, decision, decided_by, reason "
        "from raw.exception_decisions order by all"
    ).fetchall()


def record(con, servicing_suite: str, today: dt.date, now: dt.datetime) -> int:
    """Bring the register and its history up to date; returns the number of events added."""
    con.execute(DDL)
    current = findings(con, servicing_suite)
    known = {
        (deal_id, exception_id, on, status, detail)
        for deal_id, exception_id, on, status, detail in con.execute(
            "select deal_id, exception_id, event_on, status, detail "
            "from quality.audit_exception_history"
        ).fetchall()
    }
    new = []
    for found in current:
        for on, status, detail in found.events:
            new.append((found.deal_id, found.exception_id, on, status, detail))
    for deal_id, exception_id, on, decision, by, reason in _decisions(con):
        new.append((deal_id, exception_id, on, decision, f"{reason} (decided by {by})"))
    seen_now = {(f.deal_id, f.exception_id) for f in current}
    for deal_id, exception_id, status in con.execute(
        "select deal_id, exception_id, status from quality.audit_exceptions"
    ).fetchall():
        if (deal_id, exception_id) not in seen_now and status in OPEN_STATES:
            new.append((deal_id, exception_id, today, "cured", "no longer found by the build"))
    added = [event for event in dict.fromkeys(new) if event not in known]
    if added:
        insert_rows(con, "quality.audit_exception_history", [(*event, now) for event in added])
    # the register: every exception ever found, its attributes as last found
    kept = {
        (row[0], row[1]): row
        for row in con.execute("select * from quality.audit_exceptions").fetchall()
    }
    for f in current:
        kept[(f.deal_id, f.exception_id)] = (
            f.deal_id, f.exception_id, f.kind, f.rule, f.receivable_id, f.collection_period,
            f.field, f.value_found, f.value_expected, f.tolerance, None, None, None, None,
        )  # fmt: skip
    con.execute("delete from quality.audit_exceptions")
    if kept:
        insert_rows(con, "quality.audit_exceptions", kept.values())
    # status: the latest event (by date, then as recorded); opened: the first
    con.execute("""
        update quality.audit_exceptions as e set
            opened_on = h.opened_on, status = h.status, status_on = h.event_on,
            status_detail = h.detail
        from (
            select deal_id, exception_id, min(event_on) as opened_on,
                arg_max(status, (event_on, recorded_at)) as status,
                max(event_on) as event_on,
                arg_max(detail, (event_on, recorded_at)) as detail
            from quality.audit_exception_history
            group by deal_id, exception_id
        ) as h
        where e.deal_id = h.deal_id and e.exception_id = h.exception_id
    """)
    return len(added)


def history(con, deal_id: str, exception_id: str) -> list[tuple[dt.date, str, str]]:
    """An exception's status changes, oldest first."""
    return con.execute(
        "select event_on, status, detail from quality.audit_exception_history "
        "where deal_id = ? and exception_id = ? order by event_on, recorded_at",
        [deal_id, exception_id],
    ).fetchall()
