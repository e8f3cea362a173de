"""The frames the suites validate, computed in DuckDB (only small results reach pandas).

Money and rates arrive as exact integers (cents, millionths of the APR); shares and weighted
averages, which the suites compare within a stated tolerance, as floating ratios.
"""

SCHEDULE_RECEIVABLES = """
select
    receivable_id,
    -- 2.3(a)(iii): the level payment P = A * r / (1 - (1 + r)^-n), r = APR / 12, rounded to the
    -- cent. The annuity factor needs a real power, so it is evaluated in DOUBLE; the suite's
    -- tolerance (deal file) covers that rounding. Nothing computed here reaches the certificate.
    (scheduled_payment * 100)::bigint - round((amount_financed * 100)::double * case
        when apr > 0 then (apr::double / 12) / (1 - pow(1 + apr::double / 12, -original_term))
        else 1.0 / nullif(original_term, 0)
    end)::bigint as payment_difference_cents,
    is_repossessed,
    interest_calculation_method,
    payments_made,
    obligor_state,
    is_government_obligor,
    days_past_due,
    (principal_balance * 100)::bigint as principal_balance_cents,
    is_bankrupt,
    origination_date,
    first_payment_date,
    maturity_date,
    original_term,
    remaining_term,
    (apr * 1000000)::bigint as apr_millionths,
    (amount_financed * 100)::bigint as amount_financed_cents,
    (scheduled_payment * 100)::bigint as scheduled_payment_cents,
    -- 2.3(b): the maturity date is the first payment date plus (original term - 1) months
    (year(maturity_date) * 12 + month(maturity_date))
        - (year(first_payment_date + to_months(original_term - 1)) * 12
            + month(first_payment_date + to_months(original_term - 1)))
    as maturity_difference_months,
    ((principal_balance - amount_financed) * 100)::bigint as balance_over_amount_financed_cents
from raw.receivable_schedule
where deal_id = $deal_id
order by receivable_id
"""

SCHEDULE_POOL = """
select
    'cutoff' as pool,
    count(*) as receivable_count,
    (sum(principal_balance) * 100)::bigint as cutoff_pool_balance_cents,
    -- 2.3(s), (v): shares of and weighted averages over the Pool Balance
    -- (a share with no vehicles of its kind is 0, not NULL: expectations skip NULLs)
    (coalesce(sum(principal_balance) filter (where vehicle_new_used = 'new'), 0)
        / sum(principal_balance))::double as new_vehicle_share,
    (coalesce(sum(principal_balance) filter (where vehicle_new_used = 'used'), 0)
        / sum(principal_balance))::double as used_vehicle_share,
    (sum(remaining_term * principal_balance) / sum(principal_balance))::double
    as weighted_average_remaining_term
from raw.receivable_schedule
where deal_id = $deal_id
"""

SCHEDULE_FROM_FILINGS = """
select coalesce(bool_or(source_format = 'ex102'), false) from raw.receivable_schedule
where deal_id = $deal_id
"""

SCHEDULE_DELIVERY = """
select delivery_id from raw.deliveries
where deal_id = $deal_id and file_kind = 'receivable_schedule' and status = 'loaded'
"""

SERVICING_CRITERIA = """
select
    deal_id || '/' || collection_period as period_key,
    deal_id,
    collection_period,
    distribution_date,
    receivable_periods_tested,
    balance_mismatch_count,
    servicer_roll_forward_break_count,
    servicer_continuity_break_count,
    missing_receivable_count,
    (pool_roll_forward_difference_amount * 100)::bigint as pool_roll_forward_difference_cents,
    charge_off_mismatch_count,
    extension_beyond_final_date_count,
    repurchase_exception_count,
    (sources_minus_uses_amount * 100)::bigint as sources_minus_uses_cents,
    seniority_violation_count,
    (reserve_roll_forward_difference_amount * 100)::bigint as reserve_roll_forward_difference_cents,
    advance_exception_count,
    missing_market_input_count
from marts.rpt_servicing_criteria
order by deal_id, period_number
"""


# each trust whose latest Receivable Schedule delivery was rejected and none is loaded: its first
# finding
SCHEDULE_REJECTED = """
select deal_id, arg_max(first_finding, loaded_at)
from raw.deliveries
where scope = 'receivable_schedule'
group by deal_id
having arg_max(status, loaded_at) = 'rejected'
    and deal_id not in (select deal_id from raw.receivable_schedule)
"""
