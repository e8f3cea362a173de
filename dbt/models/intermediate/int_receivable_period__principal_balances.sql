-- One row per receivable per Collection Period on the tape: the Principal Balance recomputed by
-- the Simple Interest Method, its lifecycle events under Art. I, and the servicer's figures.
-- Incremental (macros/incremental.sql): a build of a trust from Collection Period P recomputes its
-- rows of P and later; each receivable's last row before P seeds the state carried across periods
-- (balance, unpaid interest, accrual date, and the periods of its default and purchase so far).
{{ loan_level_incremental_config() }}
{#- an EX-102 row's ending balance as its amounts give it (negative: a credit balance) -#}
{%- set filed_end_balance = '(spine.reported_beginning_balance
    - coalesce(spine.reported_principal_collected_amount, 0)
    - coalesce(spine.reported_rebate_amount, 0))' %}

with

computable_periods as (
    select * from {{ ref('int_collection_period__tape_status') }}
    where is_computable
),

tape as (
    -- the periods whose tape and every earlier one are loaded (balances carry forward: a period
    -- after a missing one is computed when that one arrives)
    select * from {{ ref('stg_servicer__loan_status') }}
    where
        {{ is_rebuilt() }}
        and (deal_id, collection_period) in (
            select
                computable_periods.deal_id,
                computable_periods.collection_period
            from computable_periods
        )
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

steps as (
    select * from {{ ref('int_receivable__simple_interest_steps') }}
),

transactions as (
    select * from {{ ref('stg_servicer__payment_transactions') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

period_flows as (
    select
        deal_id,
        receivable_id,
        collection_period,
        sum(interest_paid_cents) as interest_paid_cents,
        sum(fees_paid_cents) as fees_paid_cents,
        sum(principal_paid_cents) filter (where transaction_type = 'payment') as payment_principal_cents,
        sum(principal_paid_cents) filter (where transaction_type = 'rebate') as rebate_principal_cents,
        {{ max_by_non_null('balance_cents', 'step_number') }} as balance_cents,
        {{ max_by_non_null('unpaid_interest_cents', 'step_number') }} as unpaid_interest_cents,
        {{ max_by_non_null('last_accrual_date', 'step_number') }} as last_accrual_date
    from steps
    where step_number > 0 and {{ is_rebuilt('steps.deal_id', 'steps.collection_period') }}
    group by deal_id, receivable_id, collection_period
),

liquidations as (
    -- Liquidation Proceeds (Art. I): amounts received net of repossession and sale expenses
    select
        deal_id,
        receivable_id,
        collection_period,
        sum(transaction_amount) filter (where transaction_type = 'liquidation_proceeds')
            as gross_liquidation_amount,
        coalesce(sum(transaction_amount) filter (where transaction_type = 'liquidation_expense'), 0)
            as liquidation_expense_amount,
        min(transaction_date) filter (where transaction_type = 'liquidation_proceeds')
            as first_liquidation_date
    from transactions
    where
        transaction_type in ('liquidation_proceeds', 'liquidation_expense')
        and {{ is_rebuilt() }}
    group by deal_id, receivable_id, collection_period
),

spine as (
    select
        tape.*,
        calendar.period_number,
        calendar.distribution_date,
        deals.defaulted_days_past_due,
        schedule.apr,
        {{ apr_e6('schedule.apr') }} as apr_e6,
        {{ to_cents('schedule.cutoff_principal_balance') }}::bigint as cutoff_balance_cents,
        schedule.cutoff_last_payment_date,
        -- EX-102 deliveries carry no payment transactions (with_state below)
        (tape.source_format is distinct from 'ex102') as is_independently_recomputed
    from tape
    inner join calendar
        on tape.deal_id = calendar.deal_id and tape.collection_period = calendar.collection_period
    inner join schedule
        on tape.deal_id = schedule.deal_id and tape.receivable_id = schedule.receivable_id
    inner join deals on tape.deal_id = deals.deal_id
    -- EX-102 repeats a receivable that left the pool (charged off; at CarMax also paid off or
    -- repurchased) in every later file: a repeat (no balance at the period's start) with no
    -- recovery and no payment carries nothing new (the event counted in its own period); one with
    -- a payment carries Liquidation Proceeds (Art. I: amounts received "from whatever source").
    -- A receivable with a balance at the start is in the pool whatever its effective date says:
    -- the file that first reports a late charge-off is its period (ingestion/ex102.py)
    where not coalesce(
        tape.source_format = 'ex102'
        and tape.zero_balance_code is not null
        and tape.zero_balance_effective_date < tape.collection_period_start_date
        and tape.reported_beginning_balance <= 0
        and coalesce(tape.reported_recovered_amount, 0) = 0
        and coalesce(tape.reported_total_paid_amount, 0) = 0,
        false
    )
),

with_state as (
    -- EX-102 deliveries come without payment transactions: their receivable-periods take the
    -- balance, collections and liquidations from the tape itself, and are marked not
    -- independently recomputed. An omitted amount is no amount; Liquidation Proceeds are applied
    -- as of the last day of the Collection Period (4.3), interest being paid through
    -- interestPaidThroughDate (EX-102 reports neither the sale date nor unpaid interest).
    select
        spine.*,
        case
            when spine.is_independently_recomputed then coalesce(flows.interest_paid_cents, 0)
            else {{ to_cents('coalesce(spine.reported_interest_collected_amount, 0)') }}
        end as interest_paid_cents,
        case
            when spine.is_independently_recomputed then coalesce(flows.fees_paid_cents, 0)
            else {{ to_cents('coalesce(spine.reported_fees_collected_amount, 0)') }}
        end as fees_paid_cents,
        case
            when spine.is_independently_recomputed then coalesce(flows.payment_principal_cents, 0)
            -- a receivable in the pool: the principal its filed balances show applied, a payment
            -- beyond the balance (a credit balance, filed negative) being the obligor's, not
            -- applied (Art. I "Principal Balance" is never negative)
            when spine.reported_beginning_balance > 0
                then {{ to_cents('spine.reported_beginning_balance
                    - coalesce(spine.reported_rebate_amount, 0)
                    - greatest(' ~ filed_end_balance ~ ', 0)') }}
            -- one out of the pool: what it pays is receipts (Liquidation Proceeds after a
            -- default), as filed
            else {{ to_cents('coalesce(spine.reported_principal_collected_amount, 0)') }}
        end as payment_principal_cents,
        case
            when spine.is_independently_recomputed then coalesce(flows.rebate_principal_cents, 0)
            else {{ to_cents('coalesce(spine.reported_rebate_amount, 0)') }}
        end as rebate_principal_cents,
        case
            when spine.is_independently_recomputed then flows.balance_cents
            else {{ to_cents('greatest(' ~ filed_end_balance ~ ', 0)') }}
        end as period_balance_cents,
        case when spine.is_independently_recomputed then flows.unpaid_interest_cents else 0 end
            as period_unpaid_interest_cents,
        case
            when spine.is_independently_recomputed then flows.last_accrual_date
            else spine.interest_paid_through_date
        end as period_last_accrual_date,
        case
            when spine.is_independently_recomputed then coalesce(liquidations.gross_liquidation_amount, 0)
            else coalesce(spine.reported_recovered_amount, 0)
        end as gross_liquidation_amount,
        case
            when spine.is_independently_recomputed then coalesce(liquidations.liquidation_expense_amount, 0)
            else coalesce(spine.reported_liquidation_expense_amount, 0)
        end as liquidation_expense_amount,
        case
            when spine.is_independently_recomputed then liquidations.first_liquidation_date
            when coalesce(spine.reported_recovered_amount, 0) > 0 then spine.collection_period_end_date
        end as first_liquidation_date
    from spine
    left join period_flows as flows
        on
            spine.deal_id = flows.deal_id
            and spine.receivable_id = flows.receivable_id
            and spine.collection_period = flows.collection_period
    left join liquidations
        on
            spine.deal_id = liquidations.deal_id
            and spine.receivable_id = liquidations.receivable_id
            and spine.collection_period = liquidations.collection_period
),

{% if is_incremental() %}
seeds as (
    -- the last row kept from an earlier build of each receivable on the new tapes
    select
        kept.deal_id,
        kept.receivable_id,
        true as is_seed,
        kept.last_kept.period_number,
        kept.last_kept.simple_interest_balance_cents as period_balance_cents,
        kept.last_kept.unpaid_interest_cents as period_unpaid_interest_cents,
        kept.last_kept.last_accrual_date as period_last_accrual_date,
        kept.last_kept.known_default_period_number as prior_default_period_number,
        kept.last_kept.known_purchase_period_number as prior_purchase_period_number
    from (
        {{ last_kept_rows({
            'period_number': 'period_number',
            'simple_interest_balance_cents': 'simple_interest_balance_cents',
            'unpaid_interest_cents': 'unpaid_interest_cents',
            'last_accrual_date': 'last_accrual_date',
            'known_default_period_number': 'known_default_period_number',
            'known_purchase_period_number': 'known_purchase_period_number'
        }, 'period_number', among='spine') }}
    ) as kept
),
{% endif %}

seeded as (
    select
        *,
        null::integer as prior_default_period_number,
        null::integer as prior_purchase_period_number,
        false as is_seed
    from with_state
    {%- if is_incremental() %}
        -- incremental builds run on DuckDB only (macros/incremental.sql): the seeds have only
        -- the state columns
        union all by name
        select * from seeds
    {%- endif %}
),

events as (
    select
        *,
        -- Art. I "Purchased Receivable": the Purchase Amount is paid for it (2.4, 3.7, 9.1)
        reported_status = 'purchased' as is_purchase_event,
        -- Art. I "Defaulted Receivable": (i) 120+ days delinquent at the period end,
        -- (ii) repossessed and the vehicle sold, (iii) judged uncollectible by the servicer
        reported_days_past_due >= defaulted_days_past_due as is_delinquency_default,
        (is_repossessed and first_liquidation_date is not null) as is_sale_default,
        reported_status in ('charged_off', 'liquidated') as is_uncollectible_default
    from seeded
),

carried as (
    -- One pass over each receivable's periods (one sort: every window below shares it).
    -- The simple-interest state carries forward through periods without a transaction; the
    -- state at the end of the period before gives the beginning balance.
    select
        *,
        coalesce({{ last_non_null('period_balance_cents') }} over so_far, cutoff_balance_cents)
            as simple_interest_balance_cents,
        coalesce({{ last_non_null('period_unpaid_interest_cents') }} over so_far, 0)
            as unpaid_interest_cents,
        coalesce(
            {{ last_non_null('period_last_accrual_date') }} over so_far, cutoff_last_payment_date
        ) as last_accrual_date,
        max(period_number) over before_now as prior_period_number,
        coalesce({{ last_non_null('period_balance_cents') }} over before_now, cutoff_balance_cents)
            as prior_balance_cents,
        -- the first period of each event: one known from an earlier build (on the seed, before
        -- every period recomputed) or the first recomputed period that has it
        min(
            coalesce(prior_purchase_period_number, case when is_purchase_event then period_number end)
        ) over whole_history as purchase_period_number,
        min(
            coalesce(
                prior_default_period_number,
                case
                    when is_delinquency_default or is_sale_default or is_uncollectible_default
                        then period_number
                end
            )
        ) over whole_history as default_event_period_number
    from events
    window
        so_far as (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and current row
        ),
        before_now as (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and 1 preceding
        ),
        whole_history as (
            partition by deal_id, receivable_id order by period_number
            rows between unbounded preceding and unbounded following
        )
),

classified as (
    select
        *,
        -- a Purchased Receivable is never a Defaulted Receivable (Art. I proviso)
        case
            when purchase_period_number is null or default_event_period_number < purchase_period_number
                then default_event_period_number
        end as default_period_number
    from carried
),

final as (
    select
        deal_id,
        receivable_id,
        collection_period,
        period_number,
        distribution_date,
        delivery_id,
        reported_status,
        is_independently_recomputed,
        reported_days_past_due as days_past_due,
        coalesce(is_repossessed, false) as is_repossessed,
        coalesce(is_obligor_bankrupt, false) as is_obligor_bankrupt,
        extension_count,
        coalesce(is_extension_granted, false) as is_extension_granted,
        maturity_date,
        apr,
        -- Art. I "Principal Balance": zero after the period of default or purchase
        case
            when prior_period_number is null then cutoff_balance_cents
            when prior_period_number >= default_period_number or prior_period_number >= purchase_period_number
                then 0
            else prior_balance_cents
        end as beginning_balance_cents,
        simple_interest_balance_cents,
        interest_paid_cents,
        fees_paid_cents,
        payment_principal_cents,
        rebate_principal_cents,
        unpaid_interest_cents,
        last_accrual_date,
        coalesce(period_number = default_period_number, false) as is_default_period,
        coalesce(period_number >= default_period_number, false) as is_defaulted,
        coalesce(period_number = purchase_period_number, false) as is_purchase_period,
        coalesce(period_number >= purchase_period_number, false) as is_purchased,
        case
            when period_number = default_period_number and is_delinquency_default then 'delinquency_120'
            when period_number = default_period_number and is_sale_default then 'repossessed_and_sold'
            when period_number = default_period_number then 'uncollectible'
        end as default_reason,
        gross_liquidation_amount,
        liquidation_expense_amount,
        first_liquidation_date,
        reported_beginning_balance,
        reported_ending_balance,
        reported_interest_collected_amount,
        reported_principal_collected_amount,
        reported_fees_collected_amount,
        reported_rebate_amount,
        reported_charged_off_principal_amount,
        reported_purchase_amount,
        reported_servicer_advance_amount,
        -- what the next incremental build starts from (known at this period end)
        case when default_period_number <= period_number then default_period_number end
            as known_default_period_number,
        case when purchase_period_number <= period_number then purchase_period_number end
            as known_purchase_period_number
    from classified
    where not is_seed
)

select * from final
