-- The state before the first Distribution Date computed: one row per trust and class. From the loan
-- tapes it is the Closing Date: Initial Note Balances, the Initial Reserve Account Deposit (Art. I),
-- nothing unpaid. In reconciliation mode it is what the first reported certificate shows at its
-- beginning (lines 8*_begin, 51, 26b and the Additional Note Interest lines).
with

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

{% if var('pool_inputs', 'tapes') == 'reported' %}

    final as (
        select
            reported.deal_id,
            -- the state before the first reported Distribution Date
            reported.period_number - 1 as period_number,
            classes.class_id,
            classes.class_order,
            reported.note_balance,
            reported.unpaid_interest_amount,
            reported.reserve_account_balance,
            reported.servicing_fee_unpaid_amount
        from {{ ref('stg_reported__opening_state') }} as reported
        inner join classes on reported.deal_id = classes.deal_id and reported.class_id = classes.class_id
    )

{% else %}

    final as (
        select
            classes.deal_id,
            0 as period_number,
            classes.class_id,
            classes.class_order,
            classes.initial_balance as note_balance,
            0::decimal(18, 2) as unpaid_interest_amount,
            deals.initial_reserve_deposit_amount as reserve_account_balance,
            0::decimal(18, 2) as servicing_fee_unpaid_amount
        from classes
        inner join deals on classes.deal_id = deals.deal_id
    )

{% endif %}

select * from final
