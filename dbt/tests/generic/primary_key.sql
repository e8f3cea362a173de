{#- A model's key: rows where a key column is NULL, and combinations of `columns` that repeat
    (dbt's unique and not_null in one query per model). -#}
{% test primary_key(model, columns) %}
select {{ columns | join(', ') }}, count(*) as copies
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1 or {% for column in columns %}{{ column }} is null{{ ' or ' if not loop.last }}{% endfor %}
{% endtest %}
