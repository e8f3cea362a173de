-- The state before the first Distribution Date computed: one row per class. From the loan tapes it
-- is the Closing Date: Initial Note Balances, the Initial Reserve Account Deposit (Art. I), nothing
-- unpaid. In reconciliation mode it is what the first reported certificate shows at its beginning
-- (lines 8*_begin, 51, 26b and the Additional Note Interest lines).
with

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

terms as (
    select * from {{ ref('stg_deal__terms') }}
),

{% if var('pool_inputs', 'tapes') == 'reported' %}

final as (
    select
        -- the state before the first reported Distribution Date
        reported.period_number - 1 as period_number,
        classes.class_id,
        classes.class_order,
        reported.note_balance::decimal(18, 2) as note_balance,
        reported.unpaid_interest::decimal(18, 2) as unpaid_interest,
        reported.reserve_account_balance::decimal(18, 2) as reserve_account_balance,
        reported.servicing_fee_unpaid::decimal(18, 2) as servicing_fee_unpaid
    from {{ source('raw', 'reported_opening_state') }} as reported
    inner join classes on reported.class_id = classes.class_id
)

{% else %}

    final as (
        select
            0 as period_number,
            classes.class_id,
            classes.class_order,
            classes.initial_balance as note_balance,
            0::decimal(18, 2) as unpaid_interest,
            (
                select term_value::decimal(18, 2) from terms
                where term_name = 'initial_reserve_deposit'
            ) as reserve_account_balance,
            0::decimal(18, 2) as servicing_fee_unpaid
        from classes
    )

{% endif %}

select * from final
