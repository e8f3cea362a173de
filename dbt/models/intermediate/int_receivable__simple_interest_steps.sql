-- Principal Balance by the Simple Interest Method (Art. I "Simple Interest Method", "Principal
-- Balance"; 4.3), recomputed transaction by transaction from the Cutoff Date.
-- Interest accrues at APR x Principal Balance x actual days / 365 between balance-changing
-- events (payments and rebates), rounded half up to the cent at each event. A payment pays the
-- accrued interest first, then assessed late fees, then principal; a rebate of a financed item
-- reduces principal directly (Art. I "Principal Balance" (ii)). Money is integer cents here.
with recursive

schedule as (
    select * from {{ ref('stg_servicer__receivable_schedule') }}
),

transactions as (
    select * from {{ ref('stg_servicer__payment_transactions') }}
),

balance_events as (
    select
        receivable_id,
        collection_period,
        transaction_date,
        transaction_type,
        {{ to_cents('transaction_amount') }}::bigint as amount_cents,
        row_number() over (
            partition by receivable_id
            order by
                transaction_date,
                case transaction_type when 'late_fee' then 0 when 'rebate' then 1 else 2 end,
                transaction_amount
        ) as step_number
    from transactions
    where transaction_type in ('payment', 'rebate', 'late_fee')
),

steps as (
    select
        receivable_id,
        0 as step_number,
        null::varchar as collection_period,
        cutoff_last_payment_date as transaction_date,
        'cutoff' as transaction_type,
        0::bigint as amount_cents,
        0::bigint as accrued_interest_cents,
        0::bigint as interest_paid_cents,
        0::bigint as fees_paid_cents,
        0::bigint as principal_paid_cents,
        0::bigint as unapplied_cents,
        {{ to_cents('cutoff_principal_balance') }}::bigint as balance_cents,
        0::bigint as unpaid_interest_cents,
        0::bigint as fees_due_cents,
        cutoff_last_payment_date as last_accrual_date,
        (apr * 1000000)::bigint as apr_e6
    from schedule

    union all

    select
        receivable_id,
        step_number,
        collection_period,
        transaction_date,
        transaction_type,
        amount_cents,
        accrued_interest_cents,
        interest_paid_cents,
        fees_paid_cents,
        principal_paid_cents,
        amount_cents - interest_paid_cents - fees_paid_cents - principal_paid_cents
        - case when transaction_type = 'late_fee' then amount_cents else 0 end as unapplied_cents,
        balance_cents - principal_paid_cents as balance_cents,
        owed_interest_cents - interest_paid_cents as unpaid_interest_cents,
        fees_owed_cents - fees_paid_cents as fees_due_cents,
        last_accrual_date,
        apr_e6
    from (
        select
            *,
            case
                when transaction_type = 'payment'
                    then least(amount_cents - interest_paid_cents - fees_paid_cents, balance_cents)
                when transaction_type = 'rebate' then least(amount_cents, balance_cents)
                else 0
            end as principal_paid_cents
        from (
            select
                *,
                case
                    when transaction_type = 'payment'
                        then least(amount_cents - interest_paid_cents, fees_owed_cents)
                    else 0
                end as fees_paid_cents
            from (
                select
                    *,
                    case
                        when transaction_type = 'payment' then least(amount_cents, owed_interest_cents)
                        else 0
                    end as interest_paid_cents
                from (
                    select
                        previous.receivable_id,
                        event.step_number,
                        event.collection_period,
                        event.transaction_date,
                        event.transaction_type,
                        event.amount_cents,
                        previous.balance_cents,
                        previous.apr_e6,
                        accrual.accrued_interest_cents,
                        previous.unpaid_interest_cents + accrual.accrued_interest_cents
                        as owed_interest_cents,
                        previous.fees_due_cents
                        + case when event.transaction_type = 'late_fee' then event.amount_cents else 0 end
                        as fees_owed_cents,
                        case
                            when event.transaction_type = 'late_fee' then previous.last_accrual_date
                            else event.transaction_date
                        end as last_accrual_date
                    from steps as previous
                    inner join balance_events as event
                        on
                            previous.receivable_id = event.receivable_id
                            and event.step_number = previous.step_number + 1
                    cross join lateral (
                        select
                            case
                                when event.transaction_type = 'late_fee' then 0::bigint
                                else {{ simple_interest_cents('previous.balance_cents', 'previous.apr_e6',
                                    'event.transaction_date - previous.last_accrual_date') }}::bigint
                            end as accrued_interest_cents
                    ) as accrual
                )
            )
        )
    )
),

final as (
    select * exclude (apr_e6) from steps
)

select * from final
