{#- Rows where `column_name` differs from `expression` (an arithmetic invariant, exact). -#}
{% test equals_expression(model, column_name, expression) %}
select *
from {{ model }}
where {{ column_name }} is distinct from ({{ expression }})
{% endtest %}
