{#-
    Exact money arithmetic. DuckDB divides DECIMALs in DOUBLE, so every division that produces
    money goes through integer cents: numerator and denominator are integers, the quotient is
    rounded half away from zero (the same rule as dagster_project.money.div_half_up).
-#}
{% macro div_half_up(numerator, denominator) -%}
    (case
        when ({{ numerator }}) >= 0
            then (2 * ({{ numerator }})::hugeint + ({{ denominator }})) // (2 * ({{ denominator }})::hugeint)
        else -((-2 * ({{ numerator }})::hugeint + ({{ denominator }})) // (2 * ({{ denominator }})::hugeint))
    end)
{%- endmacro %}

{#- An amount in DECIMAL(18, 2) as integer cents (exact). -#}
{% macro to_cents(amount) -%}
    (({{ amount }}) * 100)::hugeint
{%- endmacro %}

{#- Integer cents back to DECIMAL(18, 2) (exact: multiplication, not division). -#}
{% macro from_cents(cents) -%}
    (({{ cents }})::decimal(38, 0) * 0.01)::decimal(18, 2)
{%- endmacro %}
