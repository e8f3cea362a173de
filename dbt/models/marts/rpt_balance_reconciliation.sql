-- Every receivable-period where the recomputed Principal Balance and the servicer's differ by
-- more than $0.01 (Regulation AB 1122(d)(4)(v)); empty when the servicer follows the agreement.
-- Incremental: the rows of the trusts' Collection Periods the build recomputes
-- (macros/incremental.sql).
{{ loan_level_incremental_config() }}

with

periods as (
    -- only what was recomputed from the transactions can disagree with the tape (EX-102 rows
    -- take their balances from the tape; rpt_servicing_criteria counts them)
    select * from {{ ref('fct_receivable_period') }}
    where is_independently_recomputed and {{ is_rebuilt() }}
),

compared as (
    select
        deal_id,
        receivable_id,
        collection_period,
        delivery_id,
        'ending_balance' as figure,
        ending_balance as recomputed_amount,
        reported_ending_balance as reported_amount
    from periods
    union all
    select
        deal_id,
        receivable_id,
        collection_period,
        delivery_id,
        'beginning_balance' as figure,
        beginning_balance as recomputed_amount,
        reported_beginning_balance as reported_amount
    from periods
),

final as (
    select
        *,
        reported_amount - recomputed_amount as difference_amount
    from compared
    where abs(reported_amount - recomputed_amount) > 0.01
)

select * from final
