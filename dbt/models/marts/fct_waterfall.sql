-- One row per Distribution Date and step of the priority of payments: Indenture 2.8(a) as Exhibit A
-- lines 26-42 lay it out, then the release of any Reserve Account excess (4.7(d), lines 56-57).
-- Amount due, amount paid, shortfall, and the funds of the step's source left after it.
with

dates as (
    select * from {{ ref('int_waterfall__distribution_dates') }}
),

steps as (
    select
        distribution_date,
        period_number,
        available_funds,
        reserve_excess,
        unnest([
            {
                'step_order': 1, 'line': '26', 'source': 'available_funds', 'due': total_servicing_fee, 'paid': paid_fee,
                'pays': 'Servicing Fee, with amounts unpaid from prior months (3.8)'
            },
            {
                'step_order': 2, 'line': '27', 'source': 'available_funds', 'due': advances_due, 'paid': paid_advances,
                'pays': 'Unreimbursed Servicer Advances (4.4(b))'
            },
            {
                'step_order': 3, 'line': '28', 'source': 'available_funds', 'due': capped_transition_due, 'paid': paid_capped,
                'pays': 'Successor Servicer transition expenses and indemnities, capped'
            },
            {
                'step_order': 4, 'line': '29', 'source': 'available_funds', 'due': interest_due_a, 'paid': paid_interest_a,
                'pays': 'Class A Note Interest, pro rata'
            },
            {
                'step_order': 5, 'line': '30', 'source': 'available_funds', 'due': priority_principal, 'paid': paid_priority,
                'pays': 'Priority Principal Distributable Amount'
            },
            {
                'step_order': 6, 'line': '31', 'source': 'available_funds', 'due': interest_due_b, 'paid': paid_interest_b,
                'pays': 'Class B Note Interest'
            },
            {
                'step_order': 7, 'line': '32', 'source': 'available_funds', 'due': secondary_principal, 'paid': paid_secondary,
                'pays': 'Secondary Principal Distributable Amount'
            },
            {
                'step_order': 8, 'line': '33', 'source': 'available_funds', 'due': interest_due_c, 'paid': paid_interest_c,
                'pays': 'Class C Note Interest'
            },
            {
                'step_order': 9, 'line': '34', 'source': 'available_funds', 'due': tertiary_principal, 'paid': paid_tertiary,
                'pays': 'Tertiary Principal Distributable Amount'
            },
            {
                'step_order': 10, 'line': '35', 'source': 'available_funds', 'due': interest_due_d, 'paid': paid_interest_d,
                'pays': 'Class D Note Interest'
            },
            {
                'step_order': 11, 'line': '36', 'source': 'available_funds', 'due': quaternary_principal, 'paid': paid_quaternary,
                'pays': 'Quaternary Principal Distributable Amount'
            },
            {
                'step_order': 12, 'line': '38', 'source': 'available_funds', 'due': reserve_deficiency, 'paid': paid_reserve_deposit,
                'pays': 'Reserve Account Deficiency, deposited to the Reserve Account'
            },
            {
                'step_order': 13, 'line': '39', 'source': 'available_funds', 'due': regular_principal, 'paid': paid_regular,
                'pays': 'Regular Principal Distributable Amount'
            },
            {
                'step_order': 14, 'line': '40', 'source': 'available_funds', 'due': transition_after_cap, 'paid': paid_transition_rest,
                'pays': 'Remaining unpaid Successor Servicer transition expenses'
            },
            {
                'step_order': 15, 'line': '41', 'source': 'available_funds', 'due': additional_fee_due, 'paid': paid_additional_fee,
                'pays': 'Additional Servicing Fees'
            },
            {
                'step_order': 16, 'line': '42', 'source': 'available_funds', 'due': indemnity_after_cap, 'paid': paid_indemnity_rest,
                'pays': 'Remaining unpaid Successor Servicer indemnity amounts'
            },
            {
                'step_order': 17, 'line': '44e', 'source': 'available_funds', 'due': excess_collections, 'paid': excess_collections,
                'pays': 'Excess Collections to the Certificate Payment Account'
            },
            {
                'step_order': 18, 'line': '56a', 'source': 'reserve_excess', 'due': regular_principal - paid_regular,
                'paid': reserve_to_principal, 'pays': 'Reserve Account excess: unfunded Regular Principal Distributable Amount'
            },
            {
                'step_order': 19, 'line': '56b', 'source': 'reserve_excess',
                'due': transition_after_cap - paid_transition_rest + additional_fee_due - paid_additional_fee,
                'paid': reserve_to_successor_servicer, 'pays': 'Reserve Account excess: unfunded Transition Costs and Additional Servicing Fee'
            },
            {
                'step_order': 20, 'line': '57', 'source': 'reserve_excess', 'due': reserve_to_certificateholder,
                'paid': reserve_to_certificateholder, 'pays': 'Reserve Account excess to the Certificateholder'
            }
        ]) as step
    from dates
),

final as (
    select
        steps.distribution_date,
        steps.period_number,
        step.step_order,
        step.line as certificate_line,
        step.pays,
        step.source as funded_from,
        {{ from_cents('step.due') }} as amount_due,
        {{ from_cents('step.paid') }} as amount_paid,
        {{ from_cents('step.due - step.paid') }} as shortfall_amount,
        {{ from_cents("case step.source when 'available_funds' then available_funds else reserve_excess end
            - sum(step.paid) over (partition by distribution_date, step.source order by step.step_order)") }}
            as funds_remaining_amount
    from steps
)

select * from final
