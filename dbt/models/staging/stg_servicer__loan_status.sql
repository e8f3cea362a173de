with

source as (
    select * from {{ source('raw', 'loan_status') }}
),

renamed as (
    select
        -- ids
        deal_id,
        assetNumber as receivable_id,
        collection_period,
        delivery_id,
        -- attributes
        sourceFormat as source_format,
        loanStatus as reported_status,
        zeroBalanceCode as zero_balance_code,
        zeroBalanceCodes as zero_balance_codes,
        modificationTypeCodes as modification_type_codes,
        subventedCodes as subvented_codes,
        currentDelinquencyStatus as reported_days_past_due,
        paymentExtendedNumber as extension_count,
        remainingTermToMaturityNumber as reported_remaining_term_months,
        -- amounts
        reportingPeriodBeginningLoanBalanceAmount as reported_beginning_balance,
        reportingPeriodActualEndBalanceAmount as reported_ending_balance,
        reportingPeriodScheduledPaymentAmount as scheduled_payment_amount,
        totalActualAmountPaid as reported_total_paid_amount,
        actualInterestCollectedAmount as reported_interest_collected_amount,
        actualPrincipalCollectedAmount as reported_principal_collected_amount,
        actualOtherCollectedAmount as reported_fees_collected_amount,
        rebateAmount as reported_rebate_amount,
        chargedoffPrincipalAmount as reported_charged_off_principal_amount,
        recoveredAmount as reported_recovered_amount,
        liquidationExpenseAmount as reported_liquidation_expense_amount,
        repossessedProceedsAmount as reported_repossession_proceeds_amount,
        repurchaseAmount as reported_purchase_amount,
        servicerAdvancedAmount as reported_servicer_advance_amount,
        -- dates
        reportingPeriodBeginningDate as collection_period_start_date,
        reportingPeriodEndingDate as collection_period_end_date,
        repossessionDate as repossession_date,
        interestPaidThroughDate as interest_paid_through_date,
        loanMaturityDate as maturity_date,
        zeroBalanceEffectiveDate as zero_balance_effective_date,
        -- flags
        repossessedIndicator as is_repossessed,
        extensionGrantedIndicator as is_extension_granted,
        obligorBankruptcyIndicator as is_obligor_bankrupt
    from source
)

select * from renamed
