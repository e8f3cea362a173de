-- Section 2.4 for every receivable in the breach register: when the Depositor must repurchase it,
-- for how much, and whether the servicer's tape shows that repurchase (Exhibit A lines 3, 17c, 18c).
with

exceptions as (
    select * from {{ ref('fct_eligibility_exception') }}
),

calendar as (
    select * from {{ ref('stg_deal__payment_calendar') }}
),

deals as (
    select * from {{ ref('stg_deal__deals') }}
),

all_balances as {{ not_materialized_cte() }} (
    -- read at each reference with that reference's filters, never held whole
    select * from {{ ref('int_receivable_period__principal_balances') }}
),

-- only the receivables in the breach register (a few dozen of the pool): the loan-level tables
-- are read for them alone
balances as (
    select * from all_balances
    where (deal_id, receivable_id) in (
        select
            exceptions.deal_id,
            exceptions.receivable_id
        from exceptions
    )
),

receivable_periods as (
    select * from {{ ref('fct_receivable_period') }}
    where (deal_id, receivable_id) in (
        select
            exceptions.deal_id,
            exceptions.receivable_id
        from exceptions
    )
),

breached as (
    -- one repurchase per receivable, however many representations it breaches; breaches are not
    -- cured in the data (a corrected schedule delivery removes the breach from the register)
    select
        deal_id,
        receivable_id,
        {{ ordered_string_agg('representation', "', '", 'representation') }} as representations,
        min(discovered_date) as discovered_date
    from exceptions
    group by deal_id, receivable_id
),

due as (
    -- 2.4: the cure runs to the end of the Collection Period that includes the 30th day after
    -- discovery; the repurchase is on the Distribution Date immediately following that period
    select
        breached.*,
        breached.discovered_date + deals.repurchase_cure_days as cure_deadline_date,
        calendar.collection_period as due_collection_period,
        calendar.period_number as due_period_number,
        calendar.distribution_date as due_distribution_date
    from breached
    inner join deals on breached.deal_id = deals.deal_id
    left join calendar
        on
            breached.deal_id = calendar.deal_id
            and breached.discovered_date + deals.repurchase_cure_days
            between calendar.collection_period_start_date and calendar.collection_period_end_date
),

exits as (
    -- the first period end at which the receivable left the pool other than by purchase
    select
        deal_id,
        receivable_id,
        min(period_number) filter (where is_defaulted) as default_period_number,
        min(period_number) filter (
            where simple_interest_balance_cents = 0 and not is_defaulted
        ) as paid_off_period_number
    from balances
    group by deal_id, receivable_id
),

reported as (
    -- the repurchase the servicer's tape shows
    select
        deal_id,
        receivable_id,
        collection_period as reported_collection_period,
        period_number as reported_period_number,
        reported_purchase_amount
    from receivable_periods
    where is_purchase_period
),

at_due as (
    select
        due.*,
        balances.simple_interest_balance_cents,
        balances.unpaid_interest_cents,
        balances.last_accrual_date,
        {{ apr_e6('balances.apr') }} as apr_e6,
        exits.default_period_number,
        exits.paid_off_period_number,
        last_loaded.period_number as last_loaded_period_number
    from due
    left join balances
        on
            due.deal_id = balances.deal_id
            and due.receivable_id = balances.receivable_id
            and due.due_period_number = balances.period_number
    left join exits on due.deal_id = exits.deal_id and due.receivable_id = exits.receivable_id
    left join (
        select
            deal_id,
            max(period_number) as period_number
        from all_balances
        group by deal_id
    ) as last_loaded on due.deal_id = last_loaded.deal_id
),

purchase_amounts as (
    select
        *,
        -- Art. I "Purchase Amount": the Principal Balance plus interest accrued and unpaid at the
        -- APR to but excluding the Distribution Date of the repurchase
        coalesce(simple_interest_balance_cents, 0) as purchase_principal_cents,
        case
            when simple_interest_balance_cents > 0
                then unpaid_interest_cents + {{ simple_interest_cents(
                    'simple_interest_balance_cents', 'apr_e6', days_between('last_accrual_date', 'due_distribution_date')) }}
            else 0
        end as purchase_finance_charge_cents
    from at_due
),

classified as (
    select
        purchase_amounts.*,
        reported.reported_collection_period,
        reported.reported_purchase_amount,
        case
            when purchase_amounts.default_period_number < purchase_amounts.due_period_number
                then 'defaulted_before_due'
            when
                purchase_amounts.paid_off_period_number <= purchase_amounts.due_period_number
                and reported.receivable_id is null
                then 'paid_off_before_due'
            when
                purchase_amounts.due_period_number > purchase_amounts.last_loaded_period_number
                and reported.receivable_id is null
                then 'pending'
            when reported.receivable_id is null then 'not_repurchased'
            when reported.reported_period_number < purchase_amounts.due_period_number then 'repurchased_early'
            when reported.reported_period_number > purchase_amounts.due_period_number then 'repurchased_late'
            when
                {{ to_cents('reported.reported_purchase_amount') }}
                <> purchase_amounts.purchase_principal_cents + purchase_amounts.purchase_finance_charge_cents
                then 'amount_differs'
            else 'repurchased'
        end as repurchase_status
    from purchase_amounts
    left join reported
        on purchase_amounts.deal_id = reported.deal_id and purchase_amounts.receivable_id = reported.receivable_id
),

final as (
    select
        -- ids
        deal_id,
        receivable_id,
        due_collection_period as collection_period,
        -- attributes
        representations,
        repurchase_status,
        repurchase_status in ('repurchased', 'defaulted_before_due', 'paid_off_before_due', 'pending')
            as is_as_agreed,
        repurchase_status not in ('defaulted_before_due', 'paid_off_before_due') as is_repurchase_required,
        reported_collection_period,
        -- amounts (Exhibit A line 3 and 18c: principal; line 17c: finance charge)
        {{ from_cents('purchase_principal_cents') }} as purchase_principal_amount,
        {{ from_cents('purchase_finance_charge_cents') }} as purchase_finance_charge_amount,
        {{ from_cents('purchase_principal_cents + purchase_finance_charge_cents') }} as purchase_amount,
        reported_purchase_amount,
        -- dates
        discovered_date,
        cure_deadline_date,
        due_distribution_date as distribution_date
    from classified
)

select * from final
