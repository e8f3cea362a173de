-- One row per receivable per Collection Period: balances recomputed by the Simple Interest
-- Method next to the servicer's, collections, delinquency, default, purchase, liquidation, loss.
-- Row by row from the principal balances: a view on DuckDB (macros/incremental.sql,
-- row_by_row_config), so the loan-level rows are stored once.
{{ row_by_row_config() }}

with

balances as (
    select * from {{ ref('int_receivable_period__principal_balances') }}
),

amounts as (
    select
        *,
        -- Art. I "Principal Balance" provisos: zero from the end of the period of default or purchase
        case when is_defaulted or is_purchased then 0 else simple_interest_balance_cents end
            as ending_balance_cents,
        case when is_default_period then simple_interest_balance_cents else 0 end
            as defaulted_principal_cents,
        -- Art. I "Liquidation Proceeds": all amounts received on a Defaulted Receivable (after the
        -- period of its default), net of what goes back to the obligor (a payment beyond the
        -- payoff is not applied); Available Collections (Art. I, provisos) exclude all amounts
        -- received on a Purchased Receivable after the period of its purchase
        is_defaulted and not is_default_period and not is_purchased as is_after_default,
        is_purchased and not is_purchase_period as is_after_purchase,
        interest_paid_cents + fees_paid_cents + payment_principal_cents + rebate_principal_cents
            as obligor_receipts_cents,
        case when is_purchase_period then simple_interest_balance_cents else 0 end
            as purchase_principal_cents,
        -- Art. I "Purchase Amount" (ii): unpaid interest at the APR to but excluding the Distribution Date
        case
            -- an EX-102 tape reports the Purchase Amount itself (no recomputation to compare)
            when is_purchase_period and not is_independently_recomputed
                then {{ to_cents('coalesce(reported_purchase_amount, 0)') }} - simple_interest_balance_cents
            when is_purchase_period
                then unpaid_interest_cents + {{ simple_interest_cents(
                    'simple_interest_balance_cents', 'apr_e6_value', days_between('last_accrual_date', 'distribution_date')) }}
            else 0
        end as purchase_interest_cents,
        case
            when is_purchased and not is_purchase_period then 0
            else {{ to_cents('gross_liquidation_amount - liquidation_expense_amount') }}
        end as liquidation_receipts_cents,
        -- 4.3: proceeds received in the period of default pay the interest accrued to their date
        -- first; later recoveries on a zero Principal Balance are principal
        case
            when is_default_period and first_liquidation_date is not null
                then unpaid_interest_cents + {{ simple_interest_cents(
                    'simple_interest_balance_cents', 'apr_e6_value', days_between('last_accrual_date', 'first_liquidation_date')) }}
            else 0
        end as liquidation_interest_due_cents
    from (
        select
            *,
            {{ apr_e6('apr') }} as apr_e6_value
        from balances
    ) as with_apr
),

classified_receipts as (
    select
        *,
        case when is_after_default or is_after_purchase then 0 else interest_paid_cents end
            as interest_collected_cents,
        case when is_after_default or is_after_purchase then 0 else fees_paid_cents end
            as fees_collected_cents,
        case when is_after_default or is_after_purchase then 0 else payment_principal_cents end
            as principal_collected_cents,
        case when is_after_default or is_after_purchase then 0 else rebate_principal_cents end
            as rebate_collected_cents,
        case when is_after_default then obligor_receipts_cents else 0 end
            as receipts_as_liquidation_cents,
        case when is_after_purchase then obligor_receipts_cents else 0 end
            as receipts_after_purchase_cents,
        liquidation_receipts_cents
        + case when is_after_default then obligor_receipts_cents else 0 end as liquidation_cents
    from amounts
),

final as (
    select
        -- ids
        deal_id,
        receivable_id,
        collection_period,
        period_number,
        delivery_id,
        -- dates
        distribution_date,
        maturity_date,
        last_accrual_date as interest_paid_through_date,
        -- attributes
        reported_status,
        days_past_due,
        case
            when ending_balance_cents = 0 then null
            when days_past_due = 0 then 'current'
            when days_past_due <= 30 then '1-30'
            when days_past_due <= 60 then '31-60'
            when days_past_due <= 90 then '61-90'
            else '91+'
        end as delinquency_bucket,
        default_reason,
        extension_count,
        -- flags
        is_independently_recomputed,
        ending_balance_cents > 0 as is_outstanding,
        is_default_period,
        is_defaulted,
        is_purchase_period,
        is_purchased,
        is_repossessed,
        is_obligor_bankrupt,
        is_extension_granted,
        -- recomputed amounts
        {{ from_cents('beginning_balance_cents') }} as beginning_balance,
        {{ from_cents('ending_balance_cents') }} as ending_balance,
        {{ from_cents('simple_interest_balance_cents') }} as simple_interest_balance,
        {{ from_cents('interest_collected_cents') }} as interest_collected_amount,
        {{ from_cents('principal_collected_cents') }} as principal_collected_amount,
        {{ from_cents('rebate_collected_cents') }} as rebate_principal_amount,
        {{ from_cents('fees_collected_cents') }} as fees_collected_amount,
        {{ from_cents('defaulted_principal_cents') }} as defaulted_principal_amount,
        {{ from_cents('purchase_principal_cents') }} as purchase_principal_amount,
        {{ from_cents('purchase_interest_cents') }} as purchase_interest_amount,
        {{ from_cents('liquidation_cents') }} as liquidation_proceeds_amount,
        {{ from_cents('receipts_as_liquidation_cents') }} as receipts_as_liquidation_amount,
        {{ from_cents('receipts_after_purchase_cents') }} as receipts_after_purchase_amount,
        {{ from_cents('greatest(least(liquidation_cents, liquidation_interest_due_cents), 0)') }}
            as liquidation_interest_amount,
        {{ from_cents('liquidation_cents - greatest(least(liquidation_cents, liquidation_interest_due_cents), 0)') }}
            as liquidation_principal_amount,
        -- Art. I "Net Losses": defaulted principal less Liquidation Proceeds received
        {{ from_cents('defaulted_principal_cents - liquidation_cents') }} as net_loss_amount,
        -- as reported by the servicer
        reported_beginning_balance,
        reported_ending_balance,
        reported_interest_collected_amount,
        reported_principal_collected_amount,
        reported_fees_collected_amount,
        reported_rebate_amount,
        reported_charged_off_principal_amount,
        reported_purchase_amount,
        reported_servicer_advance_amount as simple_interest_advance_amount
    from classified_receipts
)

select * from final
