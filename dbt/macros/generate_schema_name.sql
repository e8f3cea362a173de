{#- Models land in the schema their folder names (staging, intermediate, marts), not main_<x>. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name if custom_schema_name else target.schema }}
{%- endmacro %}
