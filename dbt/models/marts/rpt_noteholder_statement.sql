-- The Statement to Noteholders (4.9, Exhibit B): items (i) to (xxii) per Distribution Date, one row
-- per item and, where the item is per class, per class. Also the clean-up call test (9.1(a)).
with

cert as (
    select * from {{ ref('rpt_servicer_certificate') }}
),

terms as (
    select * from {{ ref('stg_deal__terms') }}
),

items (item_order, item, key_pattern, description) as (
    values
    (1, '(i)', 'principal_paid:%', 'Distribution allocable to principal, by class'),
    (2, '(ii)', 'priority_principal_distributable_amount', 'Priority Principal Distributable Amount'),
    (3, '(iii)', 'secondary_principal_distributable_amount', 'Secondary Principal Distributable Amount'),
    (4, '(iv)', 'tertiary_principal_distributable_amount', 'Tertiary Principal Distributable Amount'),
    (5, '(v)', 'quaternary_principal_distributable_amount', 'Quaternary Principal Distributable Amount'),
    (6, '(vi)', 'regular_principal_distributable_amount', 'Regular Principal Distributable Amount'),
    (7, '(vii)', 'interest_paid:%', 'Distribution allocable to current and overdue interest, by class'),
    (8, '(viii)', 'servicing_fee_total', 'Total Servicing Fee for the preceding Collection Period'),
    (9, '(ix)', 'class_balance_end:%', 'Outstanding principal balance after the distribution, by class'),
    (9, '(ix)', 'class_factor_end:%', 'Note Pool Factor after the distribution, by class'),
    (10, '(x)', 'beginning_pool_balance', 'Pool Balance at the close of the preceding period (line 1)'),
    (10, '(x)', 'ending_pool_balance', 'Pool Balance at the close of the related Collection Period (line 5)'),
    (11, '(xi)', 'reserve_account_ending_balance', 'Reserve Account Amount after the distribution'),
    (12, '(xii)', 'reserve_account_draw_amount', 'Reserve Account Draw Amount'),
    (13, '(xiii)', 'purchase_amount_total', 'Aggregate Purchase Amount of repurchased and purchased Receivables'),
    (14, '(xiv)', 'delinquent_%', 'Receivables 31-60, 61-90 and 91+ days delinquent (number, Principal Balance)'),
    (15, '(xv)', 'receivables_outstanding', 'Number of Receivables outstanding'),
    (16, '(xvi)', 'net_losses_amount', 'Net Losses'),
    (17, '(xvii)', 'overcollateralization_target_amount', 'Overcollateralization Target Amount'),
    (17, '(xvii)', 'overcollateralization_amount', 'Pool Balance less Note Balance after the distribution'),
    (18, '(xviii)', 'available_collections_amount', 'Available Collections'),
    (19, '(xix)', 'excess_collections_amount', 'Excess Collections'),
    (20, '(xx)', 'floating_note_rate', 'Note Rate of the floating-rate class for the Accrual Period (percent)'),
    (21, '(xxi)', 'libor_rate', 'LIBOR for the Accrual Period (percent)'),
    (22, '(xxii)', 'tangible_net_worth_amount', 'Consolidated Tangible Net Worth, Related Fiscal Quarter'),
    (23, '9.1(a)', 'clean_up_call_eligible', 'Clean-up call: Pool Balance at most 10% of the Cutoff Date Pool Balance (1 = yes)')
),

distinct_values as (
    -- a key can fill several certificate lines (e.g. Available Collections, lines 22 and 23)
    select distinct
        distribution_date,
        key,
        amount
    from cert
),

values_by_key as (
    select * from distinct_values
    union all
    -- (viii) Total Servicing Fee = Monthly Servicing Fee + unpaid prior amounts (Art. I)
    select
        distribution_date,
        'servicing_fee_total' as key,
        sum(amount) as amount
    from distinct_values
    where key in ('monthly_servicing_fee_amount', 'servicing_fee_unpaid_prior_amount')
    group by distribution_date
    union all
    -- (xiii) Purchase Amount: principal and finance charge parts (lines 3 and 17c)
    select
        distribution_date,
        'purchase_amount_total' as key,
        sum(amount) as amount
    from distinct_values
    where key in ('purchase_principal_amount', 'purchase_finance_charge_amount')
    group by distribution_date
    union all
    -- 9.1(a): the Servicer may purchase the pool once it is at most 10% of the cutoff balance
    select
        distribution_date,
        'clean_up_call_eligible' as key,
        case
            when
                max(amount) filter (where key = 'ending_pool_balance')
                <= max(amount) filter (where key = 'initial_pool_balance')
                * (
                    select max(term_value)::decimal(6, 4) from terms
                    where term_name = 'clean_up_call_percent'
                )
                then 1
            else 0
        end as amount
    from distinct_values
    group by distribution_date
),

final as (
    select
        values_by_key.distribution_date,
        items.item_order,
        items.item,
        items.description,
        case when values_by_key.key like '%:%' then split_part(values_by_key.key, ':', 2) end as class_id,
        values_by_key.key,
        values_by_key.amount
    from items
    inner join values_by_key on values_by_key.key like items.key_pattern
)

select * from final
