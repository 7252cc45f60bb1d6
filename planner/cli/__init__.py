"""The ``wattgpu`` command line (:mod:`.app`). Its modules only parse, call and print; nothing
imports this package except the console-script entry point ``planner.cli.app:main``.
"""
