-- Notes printed under a Monthly Servicer's Certificate: a reading of the agreement that shaped a
-- figure of that Distribution Date, or figures that are estimates. One row per note.
with

dates as (
    select * from {{ ref('fct_distribution_date') }}
),

totals as (
    select * from {{ ref('int_collection_period__receivable_totals') }}
),

pool_periods as (
    select * from {{ ref('fct_pool_period') }}
),

reserve_release as (
    -- 4.1(d): the Collection Account and the Reserve Account cover the Note Balance, Total Note
    -- Interest, the Total Servicing Fee and Unreimbursed Servicer Advances
    select
        deal_id,
        distribution_date,
        1 as note_order,
        '4.1(d)' as section,
        'Section 4.1(d) applies: the Collection Account and the Reserve Account cover the Note '
        || 'Balance, the Total Note Interest, the Total Servicing Fee and any Unreimbursed '
        || 'Servicer Advances, so the whole Reserve Account is part of Available Funds. What '
        || 'Available Funds then pay beyond the Principal Distributable Amounts is set by '
        || 'Section 2.8 of the Indenture, which could not be obtained; the literal reading of '
        || 'the Agreement is applied: principal is paid up to the Principal Distributable Amounts '
        || 'and the remainder is released to the Certificateholders.' as note
    from dates
    where is_reserve_released_in_full
),

estimated_liquidations as (
    -- the EX-102 ruling: a filing gives no receipt date of Liquidation Proceeds; interest accrues
    -- from interestPaidThroughDate to the Collection Period's last day, an estimate
    select
        dates.deal_id,
        dates.distribution_date,
        2 as note_order,
        'Art. I Liquidation Proceeds' as section,
        'Lines 17b and 18b are estimated: receivables reported by SEC EX-102 filing have no '
        || 'receipt date for their Liquidation Proceeds, so the interest share is accrued to the '
        || 'last day of the Collection Period. The total of lines 17b and 18b is as reported.'
            as note
    from dates
    inner join totals
        on dates.deal_id = totals.deal_id and dates.collection_period = totals.collection_period
    where
        totals.not_recomputed_count > 0
        and dates.liquidation_principal_amount + dates.liquidation_finance_charge_amount > 0
),

advance_reimbursements as (
    -- 4.2: receipts on a receivable with an unreimbursed Simple Interest Advance are retained by
    -- the Servicer; Art. I "Available Collections" excludes them
    select
        deal_id,
        distribution_date,
        3 as note_order,
        '4.2, 4.4' as section,
        'Line 21 is the Simple Interest Advances deposited for the Collection Period less the '
        || 'amounts the Servicer retained from receipts on receivables with an unreimbursed '
        || 'advance (Section 4.2), which Available Collections exclude; lines 17 and 18 show '
        || 'the receipts in full.' as note
    from pool_periods
    where simple_interest_advance_reimbursements_amount > 0
)

select * from reserve_release
union all
select * from estimated_liquidations
union all
select * from advance_reimbursements
