"""The report stage: everything a person reads about a plan.

:mod:`.text` holds the format-neutral tables (sections) and their text forms, :mod:`.plan_view`
the plan's table, Markdown, CSV and JSON renderings, :mod:`.build` the energy-disclosure report
data, :mod:`.markdown` and :mod:`.html` its renderings and :mod:`.charts` its PNG charts.
"""
