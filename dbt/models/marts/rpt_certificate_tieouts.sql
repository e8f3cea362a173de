{{ config(materialized=view_materialization()) }}
-- The certificate's arithmetic as an auditor's checklist: one row per trust, Distribution Date
-- and identity (per class where the identity is per class), with both sides, the difference and
-- whether it holds. A view, so that it always reads the figures as they are now stored.

with dates as (
    select * from {{ ref('fct_distribution_date') }}
),

notes as (
    select * from {{ ref('fct_note_distribution') }}
),

classes as (
    select * from {{ ref('stg_deal__classes') }}
),

statement_classes as (
    -- 4.9(ix): each class's balance after the distribution
    select * from {{ ref('rpt_noteholder_statement') }}
    where item = '(ix)' and kind = 'money'
),

statement_pool as (
    -- 4.9(x): the Pool Balance at the close of the related Collection Period
    select * from {{ ref('rpt_noteholder_statement') }}
    where item = '(x)' and description like '%related Collection Period'
),

class_totals as (
    select
        deal_id,
        period_number,
        sum(ending_balance) as note_balance
    from notes
    group by deal_id, period_number
),

checks as (
    select
        dates.deal_id,
        dates.distribution_date,
        1 as check_order,
        'pool roll-forward' as tieout,
        'Exhibit A line 5 = 1 - 2 - 3 - 4' as identity,
        null as class_id,
        dates.ending_pool_balance as reported_amount,
        dates.beginning_pool_balance - dates.principal_collections_amount - dates.purchase_principal_amount
        - dates.defaulted_receivables_amount as computed_amount
    from dates

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        2 as check_order,
        'sources equal uses' as tieout,
        'Available Funds (line 25) = withdrawals from the Collection Account (line 44, total)' as identity,
        null as class_id,
        dates.available_funds_amount as reported_amount,
        dates.collection_withdrawals_amount as computed_amount
    from dates

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        3 as check_order,
        'sources equal uses' as tieout,
        'Collection Account withdrawals (line 44) = the sum of their parts (4.6(a))' as identity,
        null as class_id,
        dates.collection_withdrawals_amount as reported_amount,
        dates.paid_to_servicer_amount + dates.paid_to_successor_servicer_amount
        + dates.collection_to_note_payment_amount + dates.reserve_account_deposit_amount
        + dates.excess_collections_amount as computed_amount
    from dates

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        4 as check_order,
        'sources equal uses' as tieout,
        'Note Payment Account deposits (line 45) = withdrawals (line 46)' as identity,
        null as class_id,
        dates.note_payment_deposits_amount as reported_amount,
        dates.note_payment_withdrawals_amount as computed_amount
    from dates

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        5 as check_order,
        'notes and overcollateralization' as tieout,
        'Note Balance after the distribution (line 8, total) + overcollateralization (line 11) '
        || '= Pool Balance (line 5)' as identity,
        null as class_id,
        dates.ending_pool_balance as reported_amount,
        dates.note_balance_after_amount + dates.overcollateralization_amount as computed_amount
    from dates

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        6 as check_order,
        'class balances' as tieout,
        'Note Balance (line 8, total) = the sum of the class balances' as identity,
        null as class_id,
        dates.note_balance_after_amount as reported_amount,
        class_totals.note_balance as computed_amount
    from dates
    inner join class_totals
        on dates.deal_id = class_totals.deal_id and dates.period_number = class_totals.period_number

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        7 as check_order,
        'reserve account roll-forward' as tieout,
        'Reserve Account: beginning (line 51) + earnings - draw + deposit - releases = ending '
        || '(line 58)' as identity,
        null as class_id,
        dates.reserve_account_ending_balance as reported_amount,
        dates.reserve_account_beginning_balance + dates.reserve_account_investment_earnings
        - dates.reserve_account_draw_amount + dates.reserve_account_deposit_amount
        - dates.reserve_released_to_principal_amount - dates.reserve_released_to_successor_servicer_amount
        - dates.reserve_released_to_certificateholder_amount as computed_amount
    from dates

    union all

    select
        notes.deal_id,
        notes.distribution_date,
        8 as check_order,
        'pool factors' as tieout,
        'Note Pool Factor (line 9) = balance after the distribution / original balance' as identity,
        notes.class_id,
        notes.pool_factor as reported_amount,
        {{ factor_7(to_cents('notes.ending_balance'), to_cents('classes.initial_balance')) }} as computed_amount
    from notes
    inner join classes on notes.deal_id = classes.deal_id and notes.class_id = classes.class_id

    union all

    select
        notes.deal_id,
        notes.distribution_date,
        9 as check_order,
        'statement repeats the certificate' as tieout,
        '4.9(ix): the class balance on the Statement to Noteholders = the certificate''s' as identity,
        notes.class_id,
        statement_classes.amount as reported_amount,
        notes.ending_balance as computed_amount
    from notes
    inner join statement_classes
        on
            notes.deal_id = statement_classes.deal_id
            and notes.distribution_date = statement_classes.distribution_date
            and notes.class_id = statement_classes.class_id

    union all

    select
        dates.deal_id,
        dates.distribution_date,
        10 as check_order,
        'statement repeats the certificate' as tieout,
        '4.9(x): the Pool Balance on the Statement to Noteholders = line 5' as identity,
        null as class_id,
        statement_pool.amount as reported_amount,
        dates.ending_pool_balance as computed_amount
    from dates
    inner join statement_pool
        on dates.deal_id = statement_pool.deal_id and dates.distribution_date = statement_pool.distribution_date
)

select
    deal_id,
    distribution_date,
    check_order,
    tieout,
    identity,
    class_id,
    reported_amount,
    computed_amount,
    reported_amount - computed_amount as difference_amount,
    reported_amount = computed_amount as is_tied_out
from checks
