{#-
    Exact money arithmetic. DuckDB divides DECIMALs in DOUBLE and Spark rounds a DECIMAL quotient
    to six places, so every division that produces money goes through integer cents: numerator
    and denominator are integers, the quotient is rounded half away from zero (the same rule as
    dagster_project.money.div_half_up), the integer division exact on both engines
    (macros/portable.sql floor_div).
-#}
{% macro div_half_up(numerator, denominator) -%}
    {%- set n = '(' ~ numerator ~ ')::' ~ cents_type() -%}
    {%- set d = '(' ~ denominator ~ ')::' ~ cents_type() -%}
    (case
        when ({{ numerator }}) >= 0
            then {{ floor_div('2 * ' ~ n ~ ' + ' ~ d, '2 * ' ~ d) }}
        else -{{ floor_div('-2 * ' ~ n ~ ' + ' ~ d, '2 * ' ~ d) }}
    end)
{%- endmacro %}

{#- An integer as the wide integer type, before it is multiplied by a large factor: Spark
    multiplies BIGINTs in BIGINT and, with ANSI mode off (as dbt-spark runs it), wraps around on
    overflow. -#}
{% macro widened(integer) -%}
    ({{ integer }})::{{ cents_type() }}
{%- endmacro %}

{#- An amount in DECIMAL(18, 2) as integer cents (exact). -#}
{% macro to_cents(amount) -%}
    (({{ amount }}) * 100)::{{ cents_type() }}
{%- endmacro %}

{#- An integer in units of 10^-digits as a DECIMAL with `digits` decimals (exact: a
    multiplication, not a division; the integer is first cast to DECIMAL(37 - digits, 0) so that the
    product's precision stays within 38 digits and Spark keeps every decimal). -#}
{% macro scaled(integer, digits) -%}
    (({{ integer }})::decimal({{ 37 - digits }}, 0) * 0.{{ '0' * (digits - 1) }}1)
{%- endmacro %}

{#- Integer cents back to DECIMAL(18, 2) (exact). -#}
{% macro from_cents(cents) -%}
    {{ scaled(cents, 2) }}::decimal(18, 2)
{%- endmacro %}

{#- A ratio of two cent amounts as a seven-digit decimal (Art. I "Note Pool Factor"), half up. -#}
{% macro factor_7(numerator_cents, denominator_cents) -%}
    {{ scaled(div_half_up(widened(numerator_cents) ~ ' * 10000000', 'greatest(' ~ denominator_cents ~ ', 1)'), 7) }}::decimal(12, 7)
{%- endmacro %}

{#- A receivable's APR (a fraction, decimal(8, 6) from the Receivable Schedule) in millionths, an
    exact BIGINT: the integer rate the Simple Interest Method and the APR weightings multiply by. -#}
{% macro apr_e6(apr) -%}
    ({{ apr }} * 1000000)::bigint
{%- endmacro %}

{#- Simple Interest Method (Art. I): interest in cents on `balance_cents` at the APR (in millionths)
    for `days` actual days over a 365-day year, half up; no interest for negative spans. The
    product stays BIGINT (the fold's hot path): ingestion caps a balance at $10,000,000, so even
    at 30% APR over ten years it is about 1.1 x 10^18, an eighth of BIGINT's range. -#}
{% macro simple_interest_cents(balance_cents, apr_e6, days) -%}
    {{ div_half_up(balance_cents ~ ' * ' ~ apr_e6 ~ ' * greatest(' ~ days ~ ', 0)', '365000000') }}
{%- endmacro %}

{#- A ratio of two cent amounts as a percentage with ten decimals (exact integer division, half up):
    stored unrounded for analysts; documents round it where they print it. -#}
{% macro percent_of(numerator_cents, denominator_cents) -%}
    {{ scaled(div_half_up(widened(numerator_cents) ~ ' * 1000000000000', 'greatest(' ~ denominator_cents ~ ', 1)'), 10) }}::decimal(24, 10)
{%- endmacro %}

{#- An amount in cents the waterfall carries in its `amounts` JSON (int_waterfall__distribution_dates),
    as DECIMAL(18, 2): `part` is 'deal' or 'class'. -#}
{% macro waterfall_amount(name, part='deal') -%}
    {{ from_cents(json_text('amounts', '$.' ~ part ~ '.' ~ name) ~ '::' ~ cents_type()) }}
{%- endmacro %}
