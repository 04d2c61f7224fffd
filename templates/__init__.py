"""Jinja2 templates of the report (installed as dshaudit.templates)."""
