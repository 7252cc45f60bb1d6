"""The predictors' commands (catalog, data, train, evaluate, predict), registered into the one
``wattgpu`` app by :mod:`planner.cli.app`. Each module only parses, calls and prints.
"""
