-- The Statement to Noteholders (4.9, Exhibit B): items (i) to (xxii) per trust and Distribution Date,
-- one row per item and, where the item is per class or per delinquency bucket, per class or
-- bucket; and the clean-up call test (9.1(a)). `kind` says how the amount prints (money, count,
-- factor, rate, flag).
with

dates as (
    select * from {{ ref('fct_distribution_date') }}
),

notes as (
    select * from {{ ref('fct_note_distribution') }}
),

per_class as (
    select
        notes.deal_id,
        notes.distribution_date,
        items.item_order,
        items.item,
        items.description,
        notes.class_id,
        notes.class_order as detail_order,
        items.kind,
        case items.measure
            when 'principal' then notes.principal_paid_amount
            when 'interest' then notes.interest_paid_amount
            when 'balance' then notes.ending_balance
            else notes.pool_factor
        end::decimal(38, 10) as amount
    from notes
    cross join (
        values
        (1, '(i)', 'Distribution allocable to principal', 'money', 'principal'),
        (7, '(vii)', 'Distribution allocable to current and overdue interest', 'money', 'interest'),
        (9, '(ix)', 'Outstanding principal balance after the distribution', 'money', 'balance'),
        (9, '(ix)', 'Note Pool Factor after the distribution', 'factor', 'factor')
    ) as items (item_order, item, description, kind, measure)
),

delinquency as (
    -- (xiv): the number and Principal Balance of Receivables delinquent, by bucket
    select
        dates.deal_id,
        dates.distribution_date,
        14 as item_order,
        '(xiv)' as item,
        buckets.description,
        null::string as class_id,
        buckets.detail_order,
        buckets.kind,
        case buckets.detail_order
            when 1 then dates.delinquent_31_60_count
            when 2 then dates.delinquent_31_60_balance
            when 3 then dates.delinquent_61_90_count
            when 4 then dates.delinquent_61_90_balance
            when 5 then dates.delinquent_91_plus_count
            else dates.delinquent_91_plus_balance
        end::decimal(38, 10) as amount
    from dates
    cross join (
        values
        (1, '31-60 days delinquent: number', 'count'),
        (2, '31-60 days delinquent: Principal Balance', 'money'),
        (3, '61-90 days delinquent: number', 'count'),
        (4, '61-90 days delinquent: Principal Balance', 'money'),
        (5, '91 or more days delinquent: number', 'count'),
        (6, '91 or more days delinquent: Principal Balance', 'money')
    ) as buckets (detail_order, description, kind)
),

per_date_measures as (
    select
        deal_id,
        distribution_date,
        priority_principal_distributable_amount as priority_principal,
        secondary_principal_distributable_amount as secondary_principal,
        tertiary_principal_distributable_amount as tertiary_principal,
        quaternary_principal_distributable_amount as quaternary_principal,
        regular_principal_distributable_amount as regular_principal,
        total_servicing_fee_amount as servicing_fee,
        beginning_pool_balance,
        ending_pool_balance,
        reserve_account_ending_balance as reserve_account,
        reserve_account_draw_amount as reserve_draw,
        purchase_principal_amount + purchase_finance_charge_amount as purchase_amount,
        receivables_outstanding,
        net_losses_amount as net_losses,
        overcollateralization_target_amount as overcollateralization_target,
        overcollateralization_amount as overcollateralization,
        available_collections_amount as available_collections,
        excess_collections_amount as excess_collections,
        floating_note_rate,
        index_rate,
        tangible_net_worth_amount as tangible_net_worth,
        is_clean_up_call_eligible::integer as clean_up_call
    from dates
),

per_date as (
    -- UNPIVOT leaves out NULLs: the floating-rate items where no class floats, the tangible net
    -- worth outside its reporting months
    select
        deal_id,
        distribution_date,
        measure,
        amount
    from {{ unpivoted('per_date_measures', ['deal_id', 'distribution_date'], [
        'priority_principal', 'secondary_principal', 'tertiary_principal', 'quaternary_principal',
        'regular_principal', 'servicing_fee', 'beginning_pool_balance', 'ending_pool_balance',
        'reserve_account', 'reserve_draw', 'purchase_amount', 'receivables_outstanding', 'net_losses',
        'overcollateralization_target', 'overcollateralization', 'available_collections',
        'excess_collections', 'floating_note_rate', 'index_rate', 'tangible_net_worth', 'clean_up_call'
    ], 'decimal(38, 10)', 'measure', 'amount') }} as measure_rows
),

per_date_items as (
    select
        per_date.deal_id,
        per_date.distribution_date,
        items.item_order,
        items.item,
        items.description,
        null::string as class_id,
        items.detail_order,
        items.kind,
        per_date.amount
    from per_date
    inner join (
        values
        ('priority_principal', 2, '(ii)', 1, 'Priority Principal Distributable Amount', 'money'),
        ('secondary_principal', 3, '(iii)', 1, 'Secondary Principal Distributable Amount', 'money'),
        ('tertiary_principal', 4, '(iv)', 1, 'Tertiary Principal Distributable Amount', 'money'),
        (
            'quaternary_principal', 5, '(v)', 1, 'Quaternary Principal Distributable Amount',
            'money'
        ),
        ('regular_principal', 6, '(vi)', 1, 'Regular Principal Distributable Amount', 'money'),
        (
            'servicing_fee', 8, '(viii)', 1,
            'Total Servicing Fee for the preceding Collection Period', 'money'
        ),
        (
            'beginning_pool_balance', 10, '(x)', 1,
            'Pool Balance at the close of the preceding Collection Period', 'money'
        ),
        (
            'ending_pool_balance', 10, '(x)', 2,
            'Pool Balance at the close of the related Collection Period', 'money'
        ),
        ('reserve_account', 11, '(xi)', 1, 'Reserve Account Amount after the distribution', 'money'),
        ('reserve_draw', 12, '(xii)', 1, 'Reserve Account Draw Amount', 'money'),
        (
            'purchase_amount', 13, '(xiii)', 1,
            'Aggregate Purchase Amount of Receivables repurchased or purchased', 'money'
        ),
        ('receivables_outstanding', 15, '(xv)', 1, 'Number of Receivables outstanding', 'count'),
        ('net_losses', 16, '(xvi)', 1, 'Net Losses', 'money'),
        (
            'overcollateralization_target', 17, '(xvii)', 1,
            'Overcollateralization Target Amount', 'money'
        ),
        (
            'overcollateralization', 17, '(xvii)', 2,
            'Pool Balance less Note Balance after the distribution', 'money'
        ),
        ('available_collections', 18, '(xviii)', 1, 'Available Collections', 'money'),
        ('excess_collections', 19, '(xix)', 1, 'Excess Collections', 'money'),
        (
            'floating_note_rate', 20, '(xx)', 1,
            'Note Rate of the floating-rate class for the accrual period (percent)', 'rate'
        ),
        ('index_rate', 21, '(xxi)', 1, 'Floating index for the accrual period (percent)', 'rate'),
        (
            'tangible_net_worth', 22, '(xxii)', 1,
            'Consolidated Tangible Net Worth, Related Fiscal Quarter', 'money'
        ),
        (
            'clean_up_call', 23, '9.1(a)', 1,
            'Clean-up call: Pool Balance at most the clean-up share of the Cutoff Date Pool Balance',
            'flag'
        )
    ) as items (measure, item_order, item, detail_order, description, kind)
        on per_date.measure = items.measure
),

final as (
    select * from per_class
    union all
    select * from delinquency
    union all
    select * from per_date_items
)

select * from final
