"""The ``wattgpu`` command line (:mod:`.app`). Its modules only parse, call and print; nothing
imports this package except the console-script entry point ``planner.cli.entry:main`` (which runs
``planner.cli.app:main``).

Importing it sizes polars' thread pool before polars is imported (:mod:`.threads`).
"""

from planner.cli.threads import size_polars_pool

size_polars_pool()
