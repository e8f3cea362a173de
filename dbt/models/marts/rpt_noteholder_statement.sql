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

deals as (
    select * from {{ ref('stg_deal__deals') }}
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
        null::varchar as class_id,
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

per_date as (
    unpivot (
        select
            deal_id,
            distribution_date,
            priority_principal_distributable_amount::decimal(38, 10)
                as "2|(ii)|Priority Principal Distributable Amount|money",
            secondary_principal_distributable_amount::decimal(38, 10)
                as "3|(iii)|Secondary Principal Distributable Amount|money",
            tertiary_principal_distributable_amount::decimal(38, 10)
                as "4|(iv)|Tertiary Principal Distributable Amount|money",
            quaternary_principal_distributable_amount::decimal(38, 10)
                as "5|(v)|Quaternary Principal Distributable Amount|money",
            regular_principal_distributable_amount::decimal(38, 10)
                as "6|(vi)|Regular Principal Distributable Amount|money",
            total_servicing_fee_amount::decimal(38, 10)
                as "8|(viii)|Total Servicing Fee for the preceding Collection Period|money",
            beginning_pool_balance::decimal(38, 10)
                as "10|(x)|Pool Balance at the close of the preceding Collection Period|money",
            ending_pool_balance::decimal(38, 10)
                as "10|(x)|Pool Balance at the close of the related Collection Period|money",
            reserve_account_ending_balance::decimal(38, 10)
                as "11|(xi)|Reserve Account Amount after the distribution|money",
            reserve_account_draw_amount::decimal(38, 10) as "12|(xii)|Reserve Account Draw Amount|money",
            (purchase_principal_amount + purchase_finance_charge_amount)::decimal(38, 10)
                as "13|(xiii)|Aggregate Purchase Amount of Receivables repurchased or purchased|money",
            receivables_outstanding::decimal(38, 10) as "15|(xv)|Number of Receivables outstanding|count",
            net_losses_amount::decimal(38, 10) as "16|(xvi)|Net Losses|money",
            overcollateralization_target_amount::decimal(38, 10)
                as "17|(xvii)|Overcollateralization Target Amount|money",
            overcollateralization_amount::decimal(38, 10)
                as "17|(xvii)|Pool Balance less Note Balance after the distribution|money",
            available_collections_amount::decimal(38, 10) as "18|(xviii)|Available Collections|money",
            excess_collections_amount::decimal(38, 10) as "19|(xix)|Excess Collections|money",
            floating_note_rate::decimal(38, 10)
                as "20|(xx)|Note Rate of the floating-rate class for the accrual period (percent)|rate",
            index_rate::decimal(38, 10) as "21|(xxi)|Floating index for the accrual period (percent)|rate",
            tangible_net_worth_amount::decimal(38, 10)
                as "22|(xxii)|Consolidated Tangible Net Worth, Related Fiscal Quarter|money",
            is_clean_up_call_eligible::integer::decimal(38, 10)
                as "23|9.1(a)|Clean-up call: Pool Balance at most the clean-up share of the Cutoff Date Pool Balance|flag"
        from dates
    )
    on columns(* exclude (deal_id, distribution_date))
    into name item_key value amount
),

per_date_items as (
    select
        deal_id,
        distribution_date,
        split_part(item_key, '|', 1)::integer as item_order,
        split_part(item_key, '|', 2) as item,
        split_part(item_key, '|', 3) as description,
        null::varchar as class_id,
        1 as detail_order,
        split_part(item_key, '|', 4) as kind,
        amount
    from per_date
    -- the floating-rate items exist only where a class floats
    where amount is not null or split_part(item_key, '|', 4) <> 'rate'
),

final as (
    select * from per_class
    union all
    select * from delinquency
    union all
    select * from per_date_items
)

select * from final
