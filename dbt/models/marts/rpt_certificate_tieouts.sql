{{ config(materialized='view') }}
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

statement as (
    select * from {{ ref('rpt_noteholder_statement') }}
),

class_totals as (
    select deal_id, period_number, sum(ending_balance) as note_balance
    from notes
    group by deal_id, period_number
),

checks as (
    select
        deal_id, distribution_date, 1 as check_order, 'pool roll-forward' as tieout,
        'Exhibit A line 5 = 1 - 2 - 3 - 4' as identity, null as class_id,
        ending_pool_balance as reported_amount,
        beginning_pool_balance - principal_collections_amount - purchase_principal_amount
        - defaulted_receivables_amount as computed_amount
    from dates

    union all
    select
        deal_id, distribution_date, 2, 'sources equal uses',
        'Available Funds (line 25) = withdrawals from the Collection Account (line 44, total)', null,
        available_funds_amount, collection_withdrawals_amount
    from dates

    union all
    select
        deal_id, distribution_date, 3, 'sources equal uses',
        'Collection Account withdrawals (line 44) = the sum of their parts (4.6(a))', null,
        collection_withdrawals_amount,
        paid_to_servicer_amount + paid_to_successor_servicer_amount
        + collection_to_note_payment_amount + reserve_account_deposit_amount
        + excess_collections_amount
    from dates

    union all
    select
        deal_id, distribution_date, 4, 'sources equal uses',
        'Note Payment Account deposits (line 45) = withdrawals (line 46)', null,
        note_payment_deposits_amount, note_payment_withdrawals_amount
    from dates

    union all
    select
        deal_id, distribution_date, 5, 'notes and overcollateralization',
        'Note Balance after the distribution (line 8, total) + overcollateralization (line 11) '
        || '= Pool Balance (line 5)', null,
        ending_pool_balance, note_balance_after_amount + overcollateralization_amount
    from dates

    union all
    select
        dates.deal_id, dates.distribution_date, 6, 'class balances',
        'Note Balance (line 8, total) = the sum of the class balances', null,
        dates.note_balance_after_amount, class_totals.note_balance
    from dates
    inner join class_totals
        on dates.deal_id = class_totals.deal_id and dates.period_number = class_totals.period_number

    union all
    select
        deal_id, distribution_date, 7, 'reserve account roll-forward',
        'Reserve Account: beginning (line 51) + earnings - draw + deposit - releases = ending '
        || '(line 58)', null,
        reserve_account_ending_balance,
        reserve_account_beginning_balance + reserve_account_investment_earnings
        - reserve_account_draw_amount + reserve_account_deposit_amount
        - reserve_released_to_principal_amount - reserve_released_to_successor_servicer_amount
        - reserve_released_to_certificateholder_amount
    from dates

    union all
    -- Art. I "Note Pool Factor": the class balance over its original balance, seven decimals
    select
        notes.deal_id, notes.distribution_date, 8, 'pool factors',
        'Note Pool Factor (line 9) = balance after the distribution / original balance',
        notes.class_id,
        notes.pool_factor,
        {{ factor_7(to_cents('notes.ending_balance'), to_cents('classes.initial_balance')) }}
    from notes
    inner join classes on notes.deal_id = classes.deal_id and notes.class_id = classes.class_id

    union all
    select
        notes.deal_id, notes.distribution_date, 9, 'statement repeats the certificate',
        '4.9(ix): the class balance on the Statement to Noteholders = the certificate''s',
        notes.class_id,
        statement.amount, notes.ending_balance
    from notes
    inner join statement
        on notes.deal_id = statement.deal_id and notes.distribution_date = statement.distribution_date
        and notes.class_id = statement.class_id and statement.item = '(ix)' and statement.kind = 'money'

    union all
    select
        dates.deal_id, dates.distribution_date, 10, 'statement repeats the certificate',
        '4.9(x): the Pool Balance on the Statement to Noteholders = line 5', null,
        statement.amount, dates.ending_pool_balance
    from dates
    inner join statement
        on dates.deal_id = statement.deal_id and dates.distribution_date = statement.distribution_date
        and statement.item = '(x)' and statement.description like '%related Collection Period'
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
