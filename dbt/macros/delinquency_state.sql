{#- The delinquency state of an outstanding receivable by its days past due (the roll-rate
    states of rpt_roll_rates): current, 1-30, 31-60, 61-90, 91-120. -#}
{% macro delinquency_state(days_past_due) -%}
    case
        when coalesce({{ days_past_due }}, 0) = 0 then 'current'
        when {{ days_past_due }} <= 30 then '1-30'
        when {{ days_past_due }} <= 60 then '31-60'
        when {{ days_past_due }} <= 90 then '61-90'
        else '91-120'
    end
{%- endmacro %}
