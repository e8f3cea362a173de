{#- The deal's age at a Collection Period: months from the Cutoff Date's month to the period's
    (the first Collection Period after the Cutoff Date is 1), so trusts line up by age. -#}
{% macro months_since_cutoff(collection_period_start_date, cutoff_date) -%}
    {{ month_boundaries(cutoff_date, collection_period_start_date) }}
{%- endmacro %}

{#- Months from `start`'s month to `end`'s (calendar months, the days ignored; negative when
    `end` is in an earlier month). -#}
{% macro month_boundaries(start, end) -%}
    ((year({{ end }}) - year({{ start }})) * 12 + month({{ end }}) - month({{ start }}))
{%- endmacro %}

{#- A receivable's remaining term at a Collection Period's end: whole months to its maturity
    month, never below 0 (the weighted average remaining term of line 14). -#}
{% macro remaining_term_months(collection_period_end_date, maturity_date) -%}
    greatest({{ month_boundaries(collection_period_end_date, maturity_date) }}, 0)
{%- endmacro %}
